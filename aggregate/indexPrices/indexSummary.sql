-- The summaries of the 10-minute buckets from {from_s} up to {to_s} (unix s, bucket starts and
-- ends), from index_ticks merged (read from index_ticks_by_time, its copy sorted by time, where
-- 10 minutes of every asset are a few granules): per asset and bucket with an index row, its first
-- and last priced second, and the USD volume of its priced seconds (index_price_history's rows). A
-- bucket whose rows all say 'none' gets priced_rows = 0, which replaces a summary written before.
INSERT INTO index_summary_10m (asset, bucket, priced_rows, first_second, first_price, last_second, last_price, last_status, last_trade_at, volume_usd, rolled_at)
SELECT
    asset,
    toStartOfInterval(s, INTERVAL 10 MINUTE) AS bucket,
    countIf(priced) AS priced_rows,
    minIf(s, priced) AS first_second,
    argMinIf(price, s, priced) AS first_price,
    maxIf(s, priced) AS last_second,
    argMaxIf(price, s, priced) AS last_price,
    argMaxIf(status, s, priced) AS last_status,
    argMaxIf(last_trade_at, s, priced) AS last_trade_at,
    sumIf(volume_usd, priced) AS volume_usd,
    fromUnixTimestamp64Milli({rolled_at_ms:Int64}, 'UTC') AS rolled_at
FROM
(
    -- Renamed: an alias named as a column would stand for it in the aggregates above.
    SELECT asset, second AS s, price, status, last_trade_at, volume_usd, status != 'none' AS priced
    FROM index_ticks_by_time FINAL
    WHERE second >= toDateTime({from_s:UInt32}, 'UTC') AND second < toDateTime({to_s:UInt32}, 'UTC')
)
GROUP BY asset, bucket
