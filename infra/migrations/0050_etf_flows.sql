-- Daily net flow of each US spot ETF, as loaded from the operator's CSV files (aggregate/jobs/etfFlows.ts).
-- A file is the whole series of its asset: an import writes the rows that changed with a newer
-- `imported_at`, and a tombstone (is_deleted = 1) for each row the file no longer has. Read with
-- FINAL, which keeps the newest version of each (asset, date, fund) and drops tombstones.
-- A day a fund reported nothing has no row: absence is never stored as a zero.
CREATE TABLE IF NOT EXISTS etf_flows
(
    asset       LowCardinality(String)  COMMENT 'underlying: btc, eth or sol',
    date        Date                    COMMENT 'US trading day the flow belongs to',
    fund        LowCardinality(String)  COMMENT 'fund ticker, see infra/reference/etf-funds.json',
    flow_usd    Float64                 COMMENT 'net flow in USD: creations minus redemptions; negative = outflow',
    source      LowCardinality(String)  COMMENT 'where the file says its numbers come from',
    simulated   Bool                    COMMENT 'true when the file is marked as simulated (demo data)',
    imported_at DateTime64(3, 'UTC')    COMMENT 'time of the import that wrote this version; higher wins',
    is_deleted  UInt8                   COMMENT '1 = tombstone: the row left the file'
)
ENGINE = ReplacingMergeTree(imported_at, is_deleted)
ORDER BY (asset, date, fund)
