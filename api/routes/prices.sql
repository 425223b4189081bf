-- Per asset: the index price of its latest computed second, the time of the last trade behind it,
-- whether it is carried (fail-closed: too few healthy venues), and the reference price for
-- change24h: the latest second at or before {ref_s} (now - 24 h), or, when there is none in the
-- window, the oldest second in it.
-- Only seconds from {from_s} on are read (see prices.ts), so the cost does not grow with history.
SELECT
    asset,
    argMax(s.vwap, s.second) AS price,
    toUnixTimestamp64Milli(argMax(s.last_at, s.second)) AS updatedAt,
    argMax(s.status, s.second) = 'fail_closed' AS carried,
    if(
        countIf(s.second <= toDateTime({ref_s:UInt32}, 'UTC')) > 0,
        argMaxIf(s.vwap, s.second, s.second <= toDateTime({ref_s:UInt32}, 'UTC')),
        argMin(s.vwap, s.second)
    ) AS referencePrice
FROM
(
    SELECT asset, second, price AS vwap, last_trade_at AS last_at, status
    FROM index_price_history
    WHERE asset IN {assets:Array(String)} AND second >= toDateTime({from_s:UInt32}, 'UTC')
) AS s
GROUP BY asset
