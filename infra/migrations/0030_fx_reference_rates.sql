-- Daily reference FX rates loaded from an ECB-style CSV (aggregate/jobs/fxReference.ts), converted to
-- units per USD. Used for a `vs` currency when no measured rate exists (api/currency.ts).
-- A re-import of a corrected day writes a newer row; read with FINAL.
CREATE TABLE IF NOT EXISTS fx_reference_rates
(
    date        Date                    COMMENT 'the day the reference rate was published for',
    currency    LowCardinality(String)  COMMENT 'lower-case ISO 4217 code, e.g. eur',
    per_usd     Float64                 COMMENT 'units of the currency per 1 USD (file value / the file''s USD value)',
    source      LowCardinality(String)  COMMENT 'publisher named by the file (e.g. ecb), or demo-snapshot for the demo''s approximate rates',
    imported_at DateTime64(3, 'UTC')    COMMENT 'when the importer wrote the row; the newest row of a (currency, date) wins'
)
ENGINE = ReplacingMergeTree(imported_at)
ORDER BY (currency, date)
