-- Markets the index runner excluded when it last judged them, if that was at or after {from_ms}
-- (index_constituents_latest): at most {limit}, the rules about the market's data first, the
-- perpetuals (left out by methodology, not by fault) last; `total` counts them all.
SELECT asset, venue, market, reason, count() OVER () AS total
FROM index_constituents_latest FINAL
WHERE excluded AND ts >= fromUnixTimestamp64Milli({from_ms:Int64}, 'UTC')
ORDER BY reason = 'perpetual', reason, asset, venue, market
LIMIT {limit:UInt32}
