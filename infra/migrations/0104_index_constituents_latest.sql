-- Every candidate market of every asset as the index runner last judged it: its USD price, its
-- weight in the index, and why it is excluded (/v1/coins/{id}/markets serves excluded and
-- excludeReason from here). One row per market survives merges (the newest `ts`); read with FINAL.
CREATE TABLE IF NOT EXISTS index_constituents_latest
(
    asset          LowCardinality(String)  COMMENT 'catalog id of the base asset',
    venue          LowCardinality(String)  COMMENT 'venue id, e.g. binance',
    market         LowCardinality(String)  COMMENT 'the venue''s market symbol',
    quote          LowCardinality(String)  COMMENT 'quote currency ticker of the market',
    price_usd      Nullable(Float64)       COMMENT 'last trade price in USD; null when the quote has no USD rate',
    volume_24h_usd Float64                 COMMENT 'trailing 24 h traded value, USD (0 when the quote has no USD rate)',
    weight         Float64                 COMMENT 'share of the index price (0 when excluded)',
    excluded       Bool                    COMMENT 'left out of the index price at that second (reason says why)',
    reason         LowCardinality(String)  COMMENT 'why it is excluded: stale, crossed_book, low_share, outlier, no_usd_rate, perpetual; empty when included',
    ts             DateTime64(3, 'UTC')    COMMENT 'end of the second judged'
)
ENGINE = ReplacingMergeTree(ts)
ORDER BY (asset, venue, market)
