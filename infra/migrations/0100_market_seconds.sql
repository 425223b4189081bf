-- Per market and second: what the index price engine (aggregate/indexPrice.ts) reads of each
-- market, the last trade of the second and the sums traded in it. Fed from trades by
-- market_seconds_from_trades, so a replayed batch adds nothing here either (dedup window as the
-- candle tables). Partly merged rows: read with argMaxMerge(last_price), max(last_trade_at),
-- sum(notional), sum(volume), sum(trade_count) ... GROUP BY venue, market, quote, second.
CREATE TABLE IF NOT EXISTS market_seconds
(
    asset         LowCardinality(String)                              COMMENT 'catalog id of the base asset',
    venue         LowCardinality(String)                              COMMENT 'venue id, e.g. binance',
    market        LowCardinality(String)                              COMMENT 'the venue''s market symbol',
    quote         LowCardinality(String)                              COMMENT 'quote currency ticker of the market',
    second        DateTime('UTC')                                     COMMENT 'the second the trades fell in',
    notional      SimpleAggregateFunction(sum, Float64)               COMMENT 'sum of price x quantity, quote currency',
    volume        SimpleAggregateFunction(sum, Float64)               COMMENT 'sum of quantity, base units',
    trade_count   SimpleAggregateFunction(sum, UInt64)                COMMENT 'trades in the second',
    last_price    AggregateFunction(argMax, Float64, Tuple(DateTime64(3, 'UTC'), String)) COMMENT 'price of the last trade of the second, by (ts, trade_id), quote currency',
    last_trade_at SimpleAggregateFunction(max, DateTime64(3, 'UTC'))  COMMENT 'time of the last trade of the second'
)
ENGINE = AggregatingMergeTree
PARTITION BY toYYYYMM(second)
ORDER BY (asset, second, venue, market, quote)
SETTINGS non_replicated_deduplication_window = 1000
