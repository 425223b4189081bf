-- Per asset, the highest and lowest trade price we ever measured on the markets of its index
-- price, and its first such trade: all-time high/low and "observed since" read one row per asset
-- instead of the whole history. max and min are idempotent, so a row written twice (the backfill
-- overlapping the view) changes nothing. Read with max(high), min(low), min(first_trade_at) GROUP BY asset.
CREATE TABLE IF NOT EXISTS asset_price_extremes
(
    asset          LowCardinality(String)                               COMMENT 'catalog id of the asset',
    high           SimpleAggregateFunction(max, Tuple(Float64, Int64))  COMMENT '(price, -unix ms) of the highest trade: the max is the highest price, first reached',
    low            SimpleAggregateFunction(min, Tuple(Float64, Int64))  COMMENT '(price, unix ms) of the lowest trade: the min is the lowest price, first reached',
    first_trade_at SimpleAggregateFunction(min, DateTime64(3, 'UTC'))   COMMENT 'time of the first trade'
)
ENGINE = AggregatingMergeTree
ORDER BY asset
SETTINGS non_replicated_deduplication_window = 1000
