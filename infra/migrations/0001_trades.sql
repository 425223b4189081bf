-- Every trade our collectors measured, one row per venue trade.
-- Inserted only by the aggregator, which drops trades it already holds (venue + market + trade_id),
-- so a replayed bus batch adds nothing here nor in the views fed from this table.
CREATE TABLE IF NOT EXISTS trades
(
    venue       LowCardinality(String)                    COMMENT 'venue id, e.g. binance',
    market      LowCardinality(String)                    COMMENT 'the venue''s market symbol, e.g. BTCUSDT',
    asset       LowCardinality(String)                    COMMENT 'catalog id of the base asset, e.g. bitcoin',
    quote       LowCardinality(String)                    COMMENT 'quote currency ticker, e.g. USDT',
    trade_id    String COMMENT 'the venue''s trade id' CODEC(ZSTD(1)),
    ts          DateTime64(3, 'UTC') COMMENT 'venue trade time' CODEC(Delta, ZSTD(1)),
    received_at DateTime64(3, 'UTC') COMMENT 'time our collector received it' CODEC(Delta, ZSTD(1)),
    price       Float64 COMMENT 'in quote currency' CODEC(ZSTD(1)),
    quantity    Float64 COMMENT 'in base asset units' CODEC(ZSTD(1)),
    side        Enum8('buy' = 1, 'sell' = 2)              COMMENT 'taker side'
)
ENGINE = ReplacingMergeTree
PARTITION BY toYYYYMM(ts)
ORDER BY (asset, venue, market, ts, trade_id)
SETTINGS non_replicated_deduplication_window = 1000
