-- The daily fear & greed index (aggregate/jobs/fearGreed.ts, aggregate/METHODOLOGY.md "Fear and greed"):
-- one reading per UTC day with its component breakdown. Written once a day is complete; a replayed
-- or repeated computation of a day gives the same row, and the newest `computed_at` survives merges.
CREATE TABLE IF NOT EXISTS fear_greed_daily
(
    date                Date                    COMMENT 'UTC day the reading is published for (at 00:00); it measures the complete days before it',
    score               UInt8                   COMMENT '0 (extreme fear) to 100 (extreme greed): weighted mean of the scored components, rounded',
    label               LowCardinality(String)  COMMENT 'alternative.me band of the score',
    volatility_score    Nullable(Float64)       COMMENT '0-100: 100 - percentile of 30-day volatility and drawdown; null when history is too short',
    momentum_score      Nullable(Float64)       COMMENT '0-100: percentile of close vs 30-day mean, with volume read by direction; null when history is too short',
    dominance_score     Nullable(Float64)       COMMENT '0-100: 100 - percentile of the 7-day change in BTC dominance; null when history is too short',
    realized_volatility Nullable(Float64)       COMMENT 'stdev of BTC daily log returns over 30 days (not annualised)',
    max_drawdown        Nullable(Float64)       COMMENT 'largest fall from a running peak of BTC daily closes over 30 days, 0-1',
    trend               Nullable(Float64)       COMMENT 'BTC close / mean close over 30 days - 1',
    volume_ratio        Nullable(Float64)       COMMENT 'BTC USD volume of the day / its mean over 30 days',
    dominance_change    Nullable(Float64)       COMMENT 'BTC dominance change over 7 days, percentage points, over one asset universe',
    history_days        UInt16                  COMMENT 'days of BTC daily closes the reading could draw on (at most 120: 90-day percentile window + 30-day metrics)',
    computed_at         DateTime64(3, 'UTC')    COMMENT 'when the job wrote the row'
)
ENGINE = ReplacingMergeTree(computed_at)
ORDER BY date
