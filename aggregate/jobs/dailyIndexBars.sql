-- Daily index bars of the listed assets from {from_s} on: every market quoted in {usd_quotes} (the
-- index markets), merged per UTC day. close = the day's last index-market trade, volumeUsd = quote
-- volume of those markets, stablecoins at par (the index converts them at a measured rate, which is
-- not kept per past day).
SELECT
    asset,
    toUnixTimestamp(bucket) AS t,
    argMaxMerge(close) AS close,
    sum(quote_volume) AS volumeUsd
FROM candles_1d
WHERE asset IN {assets:Array(String)}
  AND quote IN {usd_quotes:Array(String)}
  AND bucket >= toDateTime({from_s:UInt32}, 'UTC')
GROUP BY asset, bucket
ORDER BY asset, bucket
