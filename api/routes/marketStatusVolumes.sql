-- Per asset: USD volume of the index markets (quoted in {usd_quotes}, each quote at its USD rate
-- {usd_per_quote}: the stablecoins at their current measured rate, for both days) over the last 1440
-- one-minute buckets up to {last_s} (the current minute included), and over the 1440 buckets before them.
SELECT
    asset,
    sumIf(quote_volume * transform(quote, {usd_quotes:Array(String)}, {usd_per_quote:Array(Float64)}, 0.), bucket > toDateTime({split_s:UInt32}, 'UTC')) AS current,
    sumIf(quote_volume * transform(quote, {usd_quotes:Array(String)}, {usd_per_quote:Array(Float64)}, 0.), bucket <= toDateTime({split_s:UInt32}, 'UTC')) AS previous
FROM candles_1m
WHERE quote IN {usd_quotes:Array(String)}
  AND bucket > toDateTime({from_s:UInt32}, 'UTC') AND bucket <= toDateTime({last_s:UInt32}, 'UTC')
GROUP BY asset
