-- Per asset with an index row in the 48 h up to {now_s} ({from_s} on): the price of its latest
-- second, the time of the last trade behind it, whether the fail-closed rule carried it, the 1 h
-- and 24 h references (the latest second at or before {ref_1h_s} / {ref_24h_s}, or, when there is
-- none in the window, the oldest second in it), the USD volume of the seconds after {day_from_s},
-- and the free space of the store's disk (the fullest, if several).
-- Only the 48 h are read, once: a second is one row (index_price_history reads its table FINAL), so
-- argMax by second is that row. Times are unix seconds unless the name says ms.
SELECT
    asset,
    latest_s AS second,
    price,
    updatedAtMs,
    carried,
    ref1h,
    ref24h,
    volume24hUsd,
    -- In the same snapshot as the price: with the store's disk full nothing new is stored, whatever the price's age.
    (SELECT min(free_space) FROM system.disks) AS storeFreeBytes
FROM
(
    SELECT
        asset,
        toUnixTimestamp(max(s)) AS latest_s,
        argMax(p, s) AS price,
        toUnixTimestamp64Milli(argMax(last_trade_at, s)) AS updatedAtMs,
        argMax(status = 'fail_closed', s) AS carried,
        if(countIf(s <= toDateTime({ref_1h_s:UInt32}, 'UTC')) > 0,
           argMaxIf((p, toUnixTimestamp(s)), s, s <= toDateTime({ref_1h_s:UInt32}, 'UTC')),
           argMin((p, toUnixTimestamp(s)), s)) AS ref1h,
        if(countIf(s <= toDateTime({ref_24h_s:UInt32}, 'UTC')) > 0,
           argMaxIf((p, toUnixTimestamp(s)), s, s <= toDateTime({ref_24h_s:UInt32}, 'UTC')),
           argMin((p, toUnixTimestamp(s)), s)) AS ref24h,
        sumIf(volume_usd, s > toDateTime({day_from_s:UInt32}, 'UTC')) AS volume24hUsd
    FROM
    (
        -- Renamed: an alias named as a column would stand for it in the aggregates above.
        SELECT asset, second AS s, price AS p, last_trade_at, status, volume_usd
        FROM index_price_history
        WHERE asset IN {assets:Array(String)}
          AND second >= toDateTime({from_s:UInt32}, 'UTC') AND second <= toDateTime({now_s:UInt32}, 'UTC')
    )
    GROUP BY asset
)
