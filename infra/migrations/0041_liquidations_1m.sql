-- Liquidations per UTC minute, asset, venue and position side: what /v1/liquidations sums over
-- its windows, bars and breakdowns. Partly merged rows: read with sum(...) / max(...) GROUP BY.
CREATE TABLE IF NOT EXISTS liquidations_1m
(
    bucket        DateTime('UTC')                       COMMENT 'start of the minute',
    venue         LowCardinality(String)                COMMENT 'venue id, e.g. binance-futures',
    asset         LowCardinality(String)                COMMENT 'catalog id of the base asset',
    position_side Enum8('long' = 1, 'short' = 2)        COMMENT 'the position that was closed',
    value_usd     SimpleAggregateFunction(sum, Float64) COMMENT 'USD value of the valued liquidations (quotes USD, USDT, USDC at par)',
    quantity      SimpleAggregateFunction(sum, Float64) COMMENT 'base units of every liquidation, valued or not',
    valued        SimpleAggregateFunction(sum, UInt64)  COMMENT 'liquidations with a USD value',
    unvalued      SimpleAggregateFunction(sum, UInt64)  COMMENT 'liquidations on quotes we do not value (in no USD figure)',
    sampled       SimpleAggregateFunction(max, UInt8)   COMMENT '1 when any of them came from a sampled feed',
    last_ts       SimpleAggregateFunction(max, DateTime64(3, 'UTC')) COMMENT 'venue time of the last liquidation in the minute'
)
ENGINE = AggregatingMergeTree
PARTITION BY toYYYYMM(bucket)
ORDER BY (bucket, venue, asset, position_side)
SETTINGS non_replicated_deduplication_window = 1000
