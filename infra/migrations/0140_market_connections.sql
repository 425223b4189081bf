-- Every connection status the collectors published (ingest/EVENTS.md, `status`): a row when the
-- socket carrying a market dropped or a reconnect attempt failed (connected = false), and when a
-- socket carries it again or the collector started (connected = true). The index runner excludes a
-- market as `disconnected` while its latest status at or before a second says so
-- (aggregate/METHODOLOGY.md). Inserted by the status sink, which drops statuses it already holds
-- (venue + market + ts), so a replayed bus batch adds nothing.
CREATE TABLE IF NOT EXISTS market_connections
(
    asset       LowCardinality(String)  COMMENT 'catalog id of the base asset, e.g. bitcoin',
    venue       LowCardinality(String)  COMMENT 'venue id, e.g. bitstamp',
    market      LowCardinality(String)  COMMENT 'the venue''s market symbol, e.g. btcusd',
    quote       LowCardinality(String)  COMMENT 'quote currency ticker, e.g. USD',
    ts          DateTime64(3, 'UTC')    COMMENT 'when the collector saw the change (our clock)' CODEC(Delta, ZSTD(1)),
    ts_ms       Int64 ALIAS toUnixTimestamp64Milli(ts)
                                        COMMENT 'ts in unix ms: the identity of a status within its market, for the sink''s dedupe',
    received_at DateTime64(3, 'UTC')    COMMENT 'when the collector published it (equal to ts)' CODEC(Delta, ZSTD(1)),
    connected   Bool                    COMMENT 'true: a socket carries the market; false: its socket dropped or a reconnect failed'
)
ENGINE = ReplacingMergeTree
PARTITION BY toYYYYMM(ts)
ORDER BY (asset, venue, market, ts)
SETTINGS non_replicated_deduplication_window = 1000
