-- What a deduping sink (aggregate/dedupingSink.ts) is about to insert, written before the insert
-- when the bus is Kafka: one row per bus partition of each block, its offsets first to last. The
-- block's deduplication token is a function of that range and of its events, so whichever member
-- of the group takes the partition over after a crash inserts those same events under the same
-- token first: an insert of the dead member that lands later is dropped by the engine (the
-- ClickHouse Kafka Connect sink keeps such state for the same reason). Read only for offsets not
-- yet committed, so a day is far more than any use.
CREATE TABLE IF NOT EXISTS sink_intents
(
    consumer_group LowCardinality(String) COMMENT 'the bus consumer group of the sink, e.g. aggregate-trades',
    topic          LowCardinality(String) COMMENT 'the bus topic, e.g. trades',
    partition      UInt32                 COMMENT 'the bus partition',
    first_offset   UInt64                 COMMENT 'offset of the first record of the block',
    last_offset    UInt64                 COMMENT 'offset of the last record of the block',
    written_at     DateTime64(3, 'UTC') DEFAULT now64(3) COMMENT 'when the sink wrote the intent'
)
ENGINE = MergeTree
PARTITION BY toDate(written_at)
ORDER BY (consumer_group, topic, partition, last_offset)
TTL toDateTime(written_at) + INTERVAL 1 DAY
