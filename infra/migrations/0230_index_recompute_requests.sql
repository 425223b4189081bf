-- Asks the index runner (aggregate/indexRunner.ts) to compute an asset's index again from a time on,
-- for trades stored without passing through the aggregator's sinks: a discovered asset joined into
-- another (aggregate/jobs/identityJoins.ts) moves its trades with one INSERT ... SELECT. The runner
-- takes each request written after the last second it computed, once, and goes back for that asset
-- as for late trades (at most INDEX_BACKFILL_HOURS back, 7 days by default: older seconds keep their index).
CREATE TABLE IF NOT EXISTS index_recompute_requests
(
    asset        LowCardinality(String) COMMENT 'the asset whose index is to be computed again',
    from_ts      DateTime64(3, 'UTC')   COMMENT 'the earliest trade time that changed',
    reason       LowCardinality(String) COMMENT 'what changed the trades, e.g. identity-join',
    requested_at DateTime64(3, 'UTC')   COMMENT 'when it was asked'
)
ENGINE = MergeTree
ORDER BY requested_at
TTL toDateTime(requested_at) + INTERVAL 30 DAY
