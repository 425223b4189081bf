-- index_ticks' price columns again, sorted by time instead of by asset, for the readers that take a
-- few minutes of every asset (the latest index price's look-back edges, latestIndexPrices.sql, and
-- the 10-minute summaries, indexSummary.sql, in aggregate/indexPrices/). In index_ticks one asset's
-- hours share a granule with other assets' hours, so a thin slice of time reads every granule of
-- its partition; here it reads the granules of that slice. Filled by index_ticks_by_time_from_ticks
-- (0301) from every insert into index_ticks, and from the rows before it by 0302. Same key and
-- version as index_ticks: read with FINAL, the newest computation of a second wins. Its retention is
-- index_ticks' (infra/retentionPolicy.ts): the price at a past time (FX of a recomputed history)
-- reads it as far back as index_ticks goes.
CREATE TABLE IF NOT EXISTS index_ticks_by_time
(
    asset         LowCardinality(String)  COMMENT 'catalog id of the asset',
    second        DateTime('UTC')         COMMENT 'the second the price is for (index_ticks.second)',
    price         Float64                 COMMENT 'index price, USD (index_ticks.price)',
    status        Enum8('ok' = 1, 'single_venue' = 2, 'fail_closed' = 3, 'none' = 4)
                                          COMMENT 'index_ticks.status (none: no price from this second on)',
    volume_usd    Float64                 COMMENT 'USD value traded in the second on the constituents' CODEC(ZSTD(1)),
    last_trade_at DateTime64(3, 'UTC')    COMMENT 'time of the latest trade behind the price' CODEC(Delta, ZSTD(1)),
    computed_at   DateTime64(3, 'UTC')    COMMENT 'when the runner computed the row; the newest wins' CODEC(Delta, ZSTD(1))
)
ENGINE = ReplacingMergeTree(computed_at)
PARTITION BY toYYYYMM(second)
ORDER BY (second, asset)
