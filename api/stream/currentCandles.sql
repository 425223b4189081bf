-- Per asset of {assets}: its index candle of the latest bucket with a trade in {table} from
-- {from_s} on, merged over every market quoted in {usd_quotes} exactly as ohlc.sql merges them.
SELECT asset AS assetId, timestamp, open, high, low, close, volume
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
      AND bucket >= toDateTime({from_s:UInt32}, 'UTC')
    GROUP BY asset, bucket
    ORDER BY bucket DESC
    LIMIT 1 BY asset
)
