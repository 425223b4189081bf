-- Fear & greed readings published from {from_date} on (aggregate/jobs/fearGreed.ts writes them), oldest first.
SELECT
    toString(f.date) AS date,
    f.score AS score,
    f.label AS label,
    f.volatility_score AS volatilityScore,
    f.momentum_score AS momentumScore,
    f.dominance_score AS dominanceScore,
    f.realized_volatility AS realizedVolatility,
    f.max_drawdown AS maxDrawdown,
    f.trend AS trend,
    f.volume_ratio AS volumeRatio,
    f.dominance_change AS dominanceChange,
    f.history_days AS historyDays
FROM fear_greed_daily AS f FINAL
WHERE f.date >= toDate({from_date:String})
ORDER BY f.date
