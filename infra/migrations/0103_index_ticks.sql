-- The index price of every asset, as the index runner (aggregate/indexRunner.ts) computes it each
-- second from the per-market seconds (rules: aggregate/METHODOLOGY.md, "Index price"). A row is
-- stored for a second in which a constituent traded or anything else of the row changed, and at
-- least once per volume window (at most a day) while an asset has a price; the index of any second
-- is the latest row at or before it. status 'none' marks the second an asset lost its
-- price (no candidate market left, or fail-closed with nothing to carry). The runner recomputes a
-- trailing window so late trades land: the newest computation of a second wins. Read with FINAL,
-- or through the index_price_history view (which leaves the 'none' rows out).
CREATE TABLE IF NOT EXISTS index_ticks
(
    asset         LowCardinality(String)               COMMENT 'catalog id of the asset',
    second        DateTime('UTC')                      COMMENT 'the second the price is for (trades up to its end)',
    price         Float64                              COMMENT 'index price, USD; carried from the previous second when status = fail_closed',
    status        Enum8('ok' = 1, 'single_venue' = 2, 'fail_closed' = 3, 'none' = 4)
                                                       COMMENT 'ok: enough healthy venues; single_venue: one eligible venue, price from it; fail_closed: fewer healthy venues than the minimum, price carried; none: no price from this second on',
    constituents  Array(String)                        COMMENT 'venue:market of the markets in the price' CODEC(ZSTD(1)),
    excluded      Map(String, LowCardinality(String))  COMMENT 'venue:market -> reason, for every candidate market left out' CODEC(ZSTD(1)),
    volume        Float64                              COMMENT 'base units traded in the second on the constituents' CODEC(ZSTD(1)),
    volume_usd    Float64                              COMMENT 'USD value traded in the second on the constituents' CODEC(ZSTD(1)),
    trade_count   UInt32                               COMMENT 'trades in the second on the constituents',
    last_trade_at DateTime64(3, 'UTC')                 COMMENT 'time of the latest trade behind the price (carried with it when fail_closed)' CODEC(Delta, ZSTD(1)),
    computed_at   DateTime64(3, 'UTC')                 COMMENT 'when the runner computed the row; the newest wins' CODEC(Delta, ZSTD(1))
)
ENGINE = ReplacingMergeTree(computed_at)
PARTITION BY toYYYYMM(second)
ORDER BY (asset, second)
