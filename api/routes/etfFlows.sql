-- The flows of the asked assets: FINAL keeps the newest version of each (asset, date, fund) and
-- drops the rows whose newest version is a tombstone (aggregate/jobs/etfFlows.ts).
SELECT asset, toString(date) AS date, fund, flow_usd AS flowUsd, source, simulated
FROM etf_flows FINAL
WHERE asset IN {assets:Array(String)}
ORDER BY asset, date, fund
