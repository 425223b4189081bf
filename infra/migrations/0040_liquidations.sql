-- Every forced liquidation our collectors received, one row per venue liquidation
-- (aggregate/liquidationSink.ts; semantics in ingest/EVENTS.md). Inserted only by the liquidation
-- sink, which drops liquidations it already holds (venue + market + liquidation_id), so a replayed
-- bus batch adds nothing here nor in liquidations_1m. Sorted by venue then time: the endpoint reads
-- time windows of every venue or of one.
CREATE TABLE IF NOT EXISTS liquidations
(
    asset          LowCardinality(String)  COMMENT 'catalog id of the base asset, e.g. bitcoin',
    venue          LowCardinality(String)  COMMENT 'venue id, e.g. binance-futures',
    market         LowCardinality(String)  COMMENT 'the venue''s market symbol, e.g. BTCUSDT',
    quote          LowCardinality(String)  COMMENT 'quote currency ticker, e.g. USDT',
    liquidation_id String COMMENT 'the venue''s id for the liquidation (or one the collector derives from its fields)' CODEC(ZSTD(1)),
    ts             DateTime64(3, 'UTC') COMMENT 'venue time of the liquidation' CODEC(Delta, ZSTD(1)),
    received_at    DateTime64(3, 'UTC') COMMENT 'time our collector received it' CODEC(Delta, ZSTD(1)),
    price          Float64 COMMENT 'in quote currency: the venue''s average fill price where it gives one, else its order or bankruptcy price' CODEC(ZSTD(1)),
    quantity       Float64 COMMENT 'in base asset units (contracts converted by the collector)' CODEC(ZSTD(1)),
    value_usd      Nullable(Float64) MATERIALIZED if(quote IN ('USD', 'USDT', 'USDC'), price * quantity, NULL)
                   COMMENT 'price x quantity for USD, USDT and USDC quotes (stablecoins at par); NULL for other quotes, which are not valued',
    position_side  Enum8('long' = 1, 'short' = 2) COMMENT 'the position that was closed (a forced sell closes a long)',
    sampled        Bool COMMENT 'true when the venue''s feed publishes a sample of its liquidations, not all (Binance: one per symbol per second)'
)
ENGINE = ReplacingMergeTree
PARTITION BY toYYYYMM(ts)
ORDER BY (venue, ts, market, liquidation_id)
SETTINGS non_replicated_deduplication_window = 1000
