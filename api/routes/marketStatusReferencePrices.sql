-- Per asset: the index price of its first second in [{from_s}, {to_s}), the
-- reference price of the altcoin-season window. An asset with no index price in that span is absent.
SELECT asset, argMin(s.vwap, s.second) AS price
FROM
(
    SELECT asset, second, price AS vwap
    FROM index_price_history
    WHERE asset IN {assets:Array(String)}
      AND second >= toDateTime({from_s:UInt32}, 'UTC') AND second < toDateTime({to_s:UInt32}, 'UTC')
) AS s
GROUP BY asset
