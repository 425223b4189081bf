-- Per asset: USD volume of the index markets (quoted in USD, USDT, USDC) over the last 1440 one-minute
-- buckets up to {last_s} (the current minute included), and over the 1440 buckets before them.
SELECT
    asset,
    sumIf(quote_volume, bucket > toDateTime({split_s:UInt32}, 'UTC')) AS current,
    sumIf(quote_volume, bucket <= toDateTime({split_s:UInt32}, 'UTC')) AS previous
FROM candles_1m
WHERE quote IN ('USD', 'USDT', 'USDC')
  AND bucket > toDateTime({from_s:UInt32}, 'UTC') AND bucket <= toDateTime({last_s:UInt32}, 'UTC')
GROUP BY asset
