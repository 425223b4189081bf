-- Index candles of one asset: every market quoted in {usd_quotes} (the same markets as the index
-- price), merged per bucket, the stablecoins at par (their rate at a past bucket is not kept). The most recent {limit} buckets, oldest first.
SELECT timestamp, open, high, low, close, volume
FROM
(
    SELECT
        toUnixTimestamp(bucket) * 1000 AS timestamp,
        argMinMerge(open) AS open,
        max(high) AS high,
        min(low) AS low,
        argMaxMerge(close) AS close,
        sum(volume) AS volume
    FROM {table:Identifier}
    WHERE asset = {asset:String} AND quote IN {usd_quotes:Array(String)}
    GROUP BY bucket
    ORDER BY bucket DESC
    LIMIT {limit:UInt32}
)
ORDER BY timestamp
