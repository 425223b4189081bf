-- Per asset, the time of the last import that changed its flows. Without FINAL, so that an import
-- which only removed rows (tombstones) counts too.
SELECT asset, toUnixTimestamp64Milli(max(imported_at)) AS updatedAt
FROM etf_flows
WHERE asset IN {assets:Array(String)}
GROUP BY asset
