-- Index candles per asset of {assets}: every market quoted in {usd_quotes} (the markets of the index
-- price, stablecoins at par: their rate at a past bucket is not kept) merged per bucket. The latest
-- {limit} buckets of each asset that start in [{from_s}, {to_s}), oldest first.
SELECT asset, timestamp, open, high, low, close, volume
FROM
(
    SELECT
        asset,
        toUnixTimestamp(bucket) * 1000 AS timestamp,
        argMinMerge(open) AS open,
        max(high) AS high,
        min(low) AS low,
        argMaxMerge(close) AS close,
        sum(volume) AS volume
    FROM {table:Identifier}
    WHERE asset IN {assets:Array(String)} AND quote IN {usd_quotes:Array(String)}
      AND bucket >= toDateTime({from_s:UInt32}, 'UTC') AND bucket < toDateTime({to_s:UInt32}, 'UTC')
    GROUP BY asset, bucket
    ORDER BY bucket DESC
    LIMIT {limit:UInt32} BY asset
)
ORDER BY asset, timestamp
