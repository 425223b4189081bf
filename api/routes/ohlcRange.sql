-- Index candles of one asset (as ohlc.sql) whose buckets start in [{from_s}, {to_s}), oldest
-- first, and the latest one before {from_s}, whose close fills the range's first intervals when
-- they had no trade. The subquery reads only bucket keys, not the aggregate states.
SELECT
    toUnixTimestamp(bucket) * 1000 AS timestamp,
    argMinMerge(open) AS open,
    max(high) AS high,
    min(low) AS low,
    argMaxMerge(close) AS close,
    sum(volume) AS volume
FROM {table:Identifier}
WHERE asset = {asset:String} AND quote IN {usd_quotes:Array(String)}
  AND bucket < toDateTime({to_s:UInt32}, 'UTC')
  AND bucket >= (
      SELECT max(bucket) FROM {table:Identifier}
      WHERE asset = {asset:String} AND quote IN {usd_quotes:Array(String)} AND bucket < toDateTime({from_s:UInt32}, 'UTC')
  )
GROUP BY bucket
ORDER BY bucket
