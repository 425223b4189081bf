-- The largest single USD-valued liquidations in [from, to), ties by newest first, then identity.
SELECT
    l.asset AS assetId,
    l.venue AS venueId,
    l.market AS market,
    toString(l.position_side) AS positionSide,
    l.price AS price,
    l.quantity AS quantity,
    assumeNotNull(l.value_usd) AS valueUsd,
    toUnixTimestamp64Milli(l.ts) AS ts
FROM liquidations AS l
WHERE l.ts >= fromUnixTimestamp64Milli({from:Int64}, 'UTC') AND l.ts < fromUnixTimestamp64Milli({to:Int64}, 'UTC')
  AND l.value_usd IS NOT NULL
  AND ({venue:String} = '' OR l.venue = {venue:String})
ORDER BY l.value_usd DESC, l.ts DESC, l.venue, l.market, l.liquidation_id
LIMIT {limit:UInt32}
