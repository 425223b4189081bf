-- The demo's SIMULATED history seeding (simulator/history.ts): what was seeded, so that a
-- seeding cut short (the process killed) is completed at the next start, with the same trades.
-- A `started` row is written before the first trade is inserted, a `complete` row once every trade
-- of the history is verified to be in `trades`, once each. Empty outside the demo.
CREATE TABLE IF NOT EXISTS demo_history
(
    state      Enum8('started' = 1, 'complete' = 2) COMMENT 'started: seeding began (the row holds what to seed); complete: every trade is stored',
    seed       UInt64               COMMENT 'seed of the random walks',
    ends_at    DateTime64(3, 'UTC') COMMENT 'the history ends one step before this time',
    days       UInt16               COMMENT 'days of history',
    step_ms    UInt32               COMMENT 'time between two simulated trades of a market (ms)',
    tickers    Array(String)        COMMENT 'simulated tickers, in seeding order',
    end_prices Array(Float64)       COMMENT 'USD price where each ticker''s walk ends (at ends_at), same order as tickers',
    trades     UInt32               COMMENT 'trades of the complete history',
    batch_rows UInt32               COMMENT 'trades per insert: a resumed seeding inserts the same batches with the same insert_deduplication_token, so those already stored are dropped',
    written_at DateTime64(3, 'UTC') COMMENT 'when this row was written'
)
ENGINE = MergeTree
ORDER BY written_at
