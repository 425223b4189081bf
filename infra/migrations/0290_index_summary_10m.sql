-- index_ticks summed up per asset and 10 minutes, for the readers of the latest index price
-- (aggregate/indexPrices/latestIndexPrices.sql): they read these summaries over their 48 h and
-- index_ticks itself only for the seconds not summed up yet and the 10 minutes around each time
-- they look back to, instead of every index row of the 48 h. The index runner writes a bucket's
-- summary from index_ticks FINAL once no live step computes its seconds again, and again after it
-- recomputes any of them (aggregate/indexPrices/indexSummary.ts); a bucket with rows of no priced
-- second still gets its row (priced_rows = 0), so that a summary written before is replaced. The
-- newest summary of a bucket wins: read with FINAL. Seconds are those of the priced rows, the
-- ones index_price_history serves (status != 'none').
CREATE TABLE IF NOT EXISTS index_summary_10m
(
    asset         LowCardinality(String) COMMENT 'catalog id of the asset',
    bucket        DateTime('UTC')        COMMENT 'start of the 10 minutes',
    priced_rows   UInt32                 COMMENT 'index rows of the bucket with a price (status != none); 0: the other columns mean nothing',
    first_second  DateTime('UTC')        COMMENT 'the first priced second of the bucket',
    first_price   Float64                COMMENT 'its index price, USD',
    last_second   DateTime('UTC')        COMMENT 'the last priced second of the bucket',
    last_price    Float64                COMMENT 'its index price, USD',
    last_status   Enum8('ok' = 1, 'single_venue' = 2, 'fail_closed' = 3, 'none' = 4)
                                         COMMENT 'its status (fail_closed: the price is carried)',
    last_trade_at DateTime64(3, 'UTC')   COMMENT 'its last trade time (index_ticks.last_trade_at)',
    volume_usd    Float64                COMMENT 'USD value traded on the constituents over the priced seconds of the bucket',
    rolled_at     DateTime64(3, 'UTC')   COMMENT 'when the summary was written; the newest wins'
)
ENGINE = ReplacingMergeTree(rolled_at)
PARTITION BY toYYYYMMDD(bucket)
ORDER BY (asset, bucket)
