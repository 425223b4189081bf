-- Spans of a market's trades the collectors missed, and how far they got them back from the
-- venue's REST history (ingest/historyRecovery.ts, ingest/tradeGaps.ts): a row per state of a gap,
-- `open` (version 1, where the venue numbers its trades so what is missing is known) and its end
-- (version 2). The latest state of a gap: argMax(state, version) ... GROUP BY venue, market, gap_id.
-- A window of trades holds an unrecovered gap where a gap whose latest state is open,
-- partly_recovered or unrecoverable overlaps it (from_ts to to_ts).
CREATE TABLE IF NOT EXISTS trade_gaps
(
    asset       LowCardinality(String) COMMENT 'catalog id of the base asset',
    venue       LowCardinality(String) COMMENT 'venue id, e.g. binance',
    market      LowCardinality(String) COMMENT 'the venue''s market symbol',
    quote       LowCardinality(String) COMMENT 'quote currency ticker of the market',
    gap_id      String COMMENT 'unique within the market',
    version     UInt8 COMMENT '1: open, 2: ended',
    event_id    String COMMENT 'gap_id/version: the identity the sink stores once',
    cause       Enum8('sequence' = 1, 'reconnect' = 2, 'restart' = 3, 'overload' = 4) COMMENT 'a skipped trade number, a socket down, a restart, trades the bus refused',
    state       Enum8('open' = 1, 'recovered' = 2, 'partly_recovered' = 3, 'unrecoverable' = 4) COMMENT 'recovered: every missing trade back (or proven never to have been a trade)',
    reason      Enum8('' = 0, 'beyond_rest_reach' = 1, 'ids_never_traded' = 2, 'venue_refused' = 3, 'no_rest_history' = 4) COMMENT 'why trades of it are not back; ids_never_traded with recovered: numbers the venue skipped',
    from_ts     DateTime64(3, 'UTC') COMMENT 'the last trade known before the gap',
    to_ts       DateTime64(3, 'UTC') COMMENT 'the first trade after it, or the time it was closed at',
    from_seq    Nullable(UInt64) COMMENT 'sequential venues: first trade number missing',
    to_seq      Nullable(UInt64) COMMENT 'sequential venues: last trade number missing',
    recovered   UInt32 COMMENT 'trades the venue''s history gave back for it',
    missing     Nullable(UInt32) COMMENT 'sequential venues: trade numbers missing',
    absent      Nullable(UInt32) COMMENT 'sequential venues: of those, how many the venue''s history does not have',
    ts          DateTime64(3, 'UTC') COMMENT 'when the gap reached this state',
    received_at DateTime64(3, 'UTC') COMMENT 'when the aggregator received the state'
)
ENGINE = MergeTree
PARTITION BY toYYYYMM(ts)
ORDER BY (asset, venue, market, ts, event_id)
SETTINGS non_replicated_deduplication_window = 1000
