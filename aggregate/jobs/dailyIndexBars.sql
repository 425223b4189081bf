-- Daily index bars of the listed assets from {from_s} on: every market quoted in USD or a USD
-- stablecoin (the index markets), merged per UTC day. close = the day's last index-market trade,
-- volumeUsd = quote volume of those markets (stablecoins at par, as the index counts them).
SELECT
    asset,
    toUnixTimestamp(bucket) AS t,
    argMaxMerge(close) AS close,
    sum(quote_volume) AS volumeUsd
FROM candles_1d
WHERE asset IN {assets:Array(String)}
  AND quote IN ('USD', 'USDT', 'USDC')
  AND bucket >= toDateTime({from_s:UInt32}, 'UTC')
GROUP BY asset, bucket
ORDER BY asset, bucket
