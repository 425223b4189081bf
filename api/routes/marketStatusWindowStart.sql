-- The first second with a BTC index price at or after {from_s}: where the altcoin-season window
-- starts (now - 90 days, or later when our history is shorter). Reads in key order and stops at
-- the first row, so its cost does not grow with history.
SELECT toUnixTimestamp(second) AS second
FROM index_price_history
WHERE asset = 'bitcoin' AND second >= toDateTime({from_s:UInt32}, 'UTC')
ORDER BY second
LIMIT 1
