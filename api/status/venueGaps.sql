-- Per venue, the gaps of missed trades whose last state came since {from_s}: how many are still
-- being recovered, how many ended not recovered (partly or at all), and the trades recovered.
SELECT
    venue,
    countIf(state = 'open') AS open,
    countIf(state IN ('partly_recovered', 'unrecoverable')) AS unrecovered,
    sum(recovered) AS recoveredTrades
FROM
(
    SELECT venue, gap_id, argMax(state, version) AS state, argMax(recovered, version) AS recovered
    FROM trade_gaps
    WHERE ts >= toDateTime64({from_s:UInt32}, 3, 'UTC')
    GROUP BY venue, market, gap_id
)
GROUP BY venue
