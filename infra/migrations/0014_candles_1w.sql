-- 1w candles per market. Index candles for an asset merge its markets at query time:
-- open/close are argMin/argMax states keyed on (trade time, trade id), so they merge across markets
-- and across partly merged parts. Read with argMinMerge(open), max(high), min(low),
-- argMaxMerge(close), sum(volume) ... GROUP BY bucket.
CREATE TABLE IF NOT EXISTS candles_1w
(
    asset        LowCardinality(String)  COMMENT 'catalog id of the base asset',
    bucket       DateTime('UTC')         COMMENT 'start of the interval',
    venue        LowCardinality(String),
    market       LowCardinality(String),
    quote        LowCardinality(String)  COMMENT 'quote currency ticker of the market',
    open         AggregateFunction(argMin, Float64, Tuple(DateTime64(3, 'UTC'), String)) COMMENT 'first trade price, by (ts, trade_id)',
    high         SimpleAggregateFunction(max, Float64),
    low          SimpleAggregateFunction(min, Float64),
    close        AggregateFunction(argMax, Float64, Tuple(DateTime64(3, 'UTC'), String)) COMMENT 'last trade price, by (ts, trade_id)',
    volume       SimpleAggregateFunction(sum, Float64) COMMENT 'base asset units traded',
    quote_volume SimpleAggregateFunction(sum, Float64) COMMENT 'quote currency traded (sum of price x quantity)',
    trade_count  SimpleAggregateFunction(sum, UInt64)
)
ENGINE = AggregatingMergeTree
PARTITION BY toYYYYMM(bucket)
ORDER BY (asset, bucket, venue, market, quote)
SETTINGS non_replicated_deduplication_window = 1000
