-- Close of each index candle (the last trade on the markets of the index price, quotes
-- {usd_quotes}, stablecoins at par: the rate of a past bucket is not kept) per asset and bucket from
-- {from_s} to {to_s}, oldest first. Buckets without a trade are absent.
SELECT
    asset,
    toUnixTimestamp(bucket) * 1000 AS t,
    argMaxMerge(close) AS close
FROM {table:Identifier}
WHERE asset IN {assets:Array(String)} AND quote IN {usd_quotes:Array(String)}
  AND bucket >= toDateTime({from_s:UInt32}, 'UTC') AND bucket <= toDateTime({to_s:UInt32}, 'UTC')
GROUP BY asset, bucket
ORDER BY asset, bucket
