-- Everything /v1/liquidations says of the window [{from}, {to}) (unix ms), in one query over
-- `liquidations`: both references to the table share one snapshot of it
-- (enable_shared_storage_snapshot_in_query, pinned below), so that the totals, bars, breakdowns,
-- counts and largest events agree (liquidations.ts sums long and short from the bars). The events
-- come from a scalar subquery (ORDER BY ... LIMIT: far cheaper than a top-N aggregate over every
-- row of every grouping set). One row per group of each grouping set:
--   bar:          per UTC-aligned bar of {bar_s} seconds (key: its start, unix s) and position side
--   asset, venue: per asset or venue and position side
--   all:          one row: counts, the newest liquidation (last_ms) and the {limit} largest
--                 USD-valued ones (largest first; ties newest first, then venue, market, id)
-- {venue} = '' reads every venue. value_usd is NULL on quotes we do not value: in no USD figure.
SELECT
    multiIf(grouping(l.bar) = 0, 'bar', grouping(l.asset) = 0, 'asset', grouping(l.venue) = 0, 'venue', 'all') AS kind,
    multiIf(kind = 'bar', toString(l.bar), kind = 'asset', toString(l.asset), kind = 'venue', toString(l.venue), '') AS key,
    if(kind = 'all', '', toString(l.position_side)) AS side,
    sum(ifNull(l.value_usd, 0)) AS usd,
    count(l.value_usd) AS valued,
    countIf(l.value_usd IS NULL) AS unvalued,
    max(toUInt8(l.sampled)) AS sampled,
    toUnixTimestamp64Milli(max(l.ts)) AS last_ms,
    if(
        kind = 'all',
        (
            -- Run once; the 20 tuples sorted by the key of its ORDER BY (groupArray keeps no order).
            SELECT arraySort(groupArray((-value, -toUnixTimestamp64Milli(ts), toString(venue), toString(market), liquidation_id, toString(asset), toString(position_side), price, quantity)))
            FROM
            (
                SELECT venue, market, liquidation_id, asset, position_side, price, quantity, ts, assumeNotNull(value_usd) AS value
                FROM liquidations
                WHERE ts >= fromUnixTimestamp64Milli({from:Int64}, 'UTC') AND ts < fromUnixTimestamp64Milli({to:Int64}, 'UTC')
                  AND ({venue:String} = '' OR venue = {venue:String}) AND value_usd IS NOT NULL
                ORDER BY value DESC, ts DESC, venue, market, liquidation_id
                LIMIT {limit:UInt32}
            )
        ),
        []
    ) AS largest
FROM
(
    -- value_usd is MATERIALIZED: * would leave it out.
    SELECT asset, venue, ts, value_usd, position_side, sampled, intDiv(toUnixTimestamp(ts), {bar_s:UInt32}) * {bar_s:UInt32} AS bar
    FROM liquidations
    WHERE ts >= fromUnixTimestamp64Milli({from:Int64}, 'UTC') AND ts < fromUnixTimestamp64Milli({to:Int64}, 'UTC')
      AND ({venue:String} = '' OR venue = {venue:String})
) AS l
GROUP BY GROUPING SETS ((l.bar, l.position_side), (l.asset, l.position_side), (l.venue, l.position_side), ())
SETTINGS enable_shared_storage_snapshot_in_query = 1
