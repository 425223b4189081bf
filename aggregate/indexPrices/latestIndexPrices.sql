-- Per asset with an index row in the 48 h up to {now_s} ({from_s} on): the price of its latest
-- second, the time of the last trade behind it, whether the fail-closed rule carried it, the 1 h
-- and 24 h references (the latest second at or before {ref_1h_s} / {ref_24h_s}, or, when there is
-- none in the window, the oldest second in it), the USD volume of the seconds after {day_from_s},
-- and the free space of the store's disk (the fullest, if several).
-- Only the 48 h are read, and of them only the three seconds used again, so the cost does not grow
-- with history. Times are unix seconds unless the name says ms.
WITH recent AS
(
    SELECT
        asset,
        toUnixTimestamp(max(second)) AS latest_s,
        toUnixTimestamp(if(countIf(second <= toDateTime({ref_1h_s:UInt32}, 'UTC')) > 0, maxIf(second, second <= toDateTime({ref_1h_s:UInt32}, 'UTC')), min(second))) AS ref_1h_s,
        toUnixTimestamp(if(countIf(second <= toDateTime({ref_24h_s:UInt32}, 'UTC')) > 0, maxIf(second, second <= toDateTime({ref_24h_s:UInt32}, 'UTC')), min(second))) AS ref_24h_s,
        sumIf(volume_usd, second > toDateTime({day_from_s:UInt32}, 'UTC')) AS volume_24h
    FROM index_price_history
    WHERE asset IN {assets:Array(String)}
      AND second >= toDateTime({from_s:UInt32}, 'UTC') AND second <= toDateTime({now_s:UInt32}, 'UTC')
    GROUP BY asset
)
SELECT
    recent.asset AS asset,
    any(recent.latest_s) AS second,
    anyIf(p.vwap, p.s = recent.latest_s) AS price,
    anyIf(toUnixTimestamp64Milli(p.last_at), p.s = recent.latest_s) AS updatedAtMs,
    anyIf(p.status = 'fail_closed', p.s = recent.latest_s) AS carried,
    anyIf((p.vwap, p.s), p.s = recent.ref_1h_s) AS ref1h,
    anyIf((p.vwap, p.s), p.s = recent.ref_24h_s) AS ref24h,
    any(recent.volume_24h) AS volume24hUsd,
    -- In the same snapshot as the price: with the store's disk full nothing new is stored, whatever the price's age.
    (SELECT min(free_space) FROM system.disks) AS storeFreeBytes
FROM recent
INNER JOIN
(
    SELECT asset, toUnixTimestamp(second) AS s, price AS vwap, last_trade_at AS last_at, status
    FROM index_price_history
    WHERE asset IN {assets:Array(String)}
      AND (asset, second) IN (SELECT asset, toDateTime(arrayJoin([latest_s, ref_1h_s, ref_24h_s]), 'UTC') FROM recent)
) AS p ON p.asset = recent.asset
GROUP BY recent.asset
