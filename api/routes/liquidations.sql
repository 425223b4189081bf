-- What /v1/liquidations reads of liquidations_1m before its window [{from_s}, to): the USD total of
-- the window of the same length just before, [{prev_s}, {from_s}), and the time of the newest
-- liquidation before the window, whenever it happened (last_ms; 0 when none). The window itself is
-- read in one scan (liquidationWindow.sql). {venue} = '' reads every venue. Windows are whole
-- minutes, so the minute sums are exact.
SELECT
    sumIf(m.value_usd, m.bucket >= toDateTime({prev_s:UInt32}, 'UTC')) AS previous_usd,
    toUnixTimestamp64Milli(max(m.last_ts)) AS last_ms
FROM liquidations_1m AS m
WHERE m.bucket < toDateTime({from_s:UInt32}, 'UTC') AND ({venue:String} = '' OR m.venue = {venue:String})
