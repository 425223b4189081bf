-- Per asset: the index price of its latest second with trades, when that second's last trade
-- happened, and the reference price for change24h: the latest second at or before {ref_s}
-- (now - 24 h), or, when there is none in the window, the oldest second in it.
-- Only seconds from {from_s} on are read (see prices.ts), so the cost does not grow with history.
SELECT
    asset,
    argMax(s.vwap, s.second) AS price,
    toUnixTimestamp64Milli(argMax(s.last_at, s.second)) AS updatedAt,
    if(
        countIf(s.second <= toDateTime({ref_s:UInt32}, 'UTC')) > 0,
        argMaxIf(s.vwap, s.second, s.second <= toDateTime({ref_s:UInt32}, 'UTC')),
        argMin(s.vwap, s.second)
    ) AS referencePrice
FROM
(
    -- index_prices holds partly merged sums: merge them per second first.
    SELECT asset, second, sum(notional) / sum(volume) AS vwap, max(last_trade_at) AS last_at
    FROM index_prices
    WHERE asset IN {assets:Array(String)} AND second >= toDateTime({from_s:UInt32}, 'UTC')
    GROUP BY asset, second
) AS s
GROUP BY asset
