-- Index price of each of {assets} since {from_s}: the latest second of every {step_s}-second step
-- (unix ms) and its price, oldest first.
SELECT
    asset,
    toUnixTimestamp(max(second)) * 1000 AS t,
    argMax(price, second) AS price
FROM index_price_history
WHERE asset IN {assets:Array(String)} AND second >= toDateTime({from_s:UInt32}, 'UTC')
GROUP BY asset, intDiv(toUnixTimestamp(second), {step_s:UInt32})
ORDER BY asset, t
