-- Per asset and second: the sums behind the volume-weighted index price of that second.
-- price = notional / volume. Partly merged rows: read with sum(...) GROUP BY asset, second,
-- or through the index_price_history view.
CREATE TABLE IF NOT EXISTS index_prices
(
    asset         LowCardinality(String)                              COMMENT 'catalog id of the asset',
    second        DateTime('UTC')                                     COMMENT 'the second the trades fell in',
    notional      SimpleAggregateFunction(sum, Float64)               COMMENT 'sum of price x quantity, USD',
    volume        SimpleAggregateFunction(sum, Float64)               COMMENT 'sum of quantity, base units',
    trade_count   SimpleAggregateFunction(sum, UInt64),
    last_trade_at SimpleAggregateFunction(max, DateTime64(3, 'UTC'))  COMMENT 'time of the last trade in the second',
    constituents  AggregateFunction(uniqExact, String)                COMMENT 'distinct venue:market pairs that traded'
)
ENGINE = AggregatingMergeTree
PARTITION BY toYYYYMM(second)
ORDER BY (asset, second)
SETTINGS non_replicated_deduplication_window = 1000
