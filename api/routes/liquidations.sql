-- Liquidation sums from liquidations_1m for /v1/liquidations, one row per (kind, key, side):
--   period: key current = [from_s, to_s), previous = [prev_s, from_s)
--   bar:    key = start of the UTC-aligned bar (unix s) the minute falls in, inside [from_s, to_s)
--   asset, venue: breakdowns inside [from_s, to_s)
--   last:   newest liquidation before to_s, whenever it happened (last_ms; 0 when none)
-- {venue} = '' reads every venue. Windows are whole minutes, so the minute sums are exact.
SELECT 'period' AS kind,
       if(m.bucket >= toDateTime({from_s:UInt32}, 'UTC'), 'current', 'previous') AS key,
       toString(m.position_side) AS side,
       sum(m.value_usd) AS usd, sum(m.valued) AS valued, sum(m.unvalued) AS unvalued, max(m.sampled) AS sampled, toInt64(0) AS last_ms
FROM liquidations_1m AS m
WHERE m.bucket >= toDateTime({prev_s:UInt32}, 'UTC') AND m.bucket < toDateTime({to_s:UInt32}, 'UTC')
  AND ({venue:String} = '' OR m.venue = {venue:String})
GROUP BY key, side
UNION ALL
SELECT 'bar' AS kind,
       toString(intDiv(toUnixTimestamp(m.bucket), {bar_s:UInt32}) * {bar_s:UInt32}) AS key,
       toString(m.position_side) AS side,
       sum(m.value_usd) AS usd, sum(m.valued) AS valued, sum(m.unvalued) AS unvalued, max(m.sampled) AS sampled, toInt64(0) AS last_ms
FROM liquidations_1m AS m
WHERE m.bucket >= toDateTime({from_s:UInt32}, 'UTC') AND m.bucket < toDateTime({to_s:UInt32}, 'UTC')
  AND ({venue:String} = '' OR m.venue = {venue:String})
GROUP BY key, side
UNION ALL
SELECT 'asset' AS kind, toString(m.asset) AS key, toString(m.position_side) AS side,
       sum(m.value_usd) AS usd, sum(m.valued) AS valued, sum(m.unvalued) AS unvalued, max(m.sampled) AS sampled, toInt64(0) AS last_ms
FROM liquidations_1m AS m
WHERE m.bucket >= toDateTime({from_s:UInt32}, 'UTC') AND m.bucket < toDateTime({to_s:UInt32}, 'UTC')
  AND ({venue:String} = '' OR m.venue = {venue:String})
GROUP BY key, side
UNION ALL
SELECT 'venue' AS kind, toString(m.venue) AS key, toString(m.position_side) AS side,
       sum(m.value_usd) AS usd, sum(m.valued) AS valued, sum(m.unvalued) AS unvalued, max(m.sampled) AS sampled, toInt64(0) AS last_ms
FROM liquidations_1m AS m
WHERE m.bucket >= toDateTime({from_s:UInt32}, 'UTC') AND m.bucket < toDateTime({to_s:UInt32}, 'UTC')
  AND ({venue:String} = '' OR m.venue = {venue:String})
GROUP BY key, side
UNION ALL
SELECT 'last' AS kind, '' AS key, '' AS side,
       toFloat64(0) AS usd, toUInt64(0) AS valued, toUInt64(0) AS unvalued, toUInt8(0) AS sampled,
       toUnixTimestamp64Milli(max(m.last_ts)) AS last_ms
FROM liquidations_1m AS m
WHERE m.bucket < toDateTime({to_s:UInt32}, 'UTC') AND ({venue:String} = '' OR m.venue = {venue:String})
