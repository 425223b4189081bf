-- Per asset with an index row in the 48 h up to {now_s} ({from_s} on): the price of its latest
-- second, the time of the last trade behind it, whether the fail-closed rule carried it, the 1 h
-- and 24 h references (the latest second at or before {ref_1h_s} / {ref_24h_s}, or, when there is
-- none in the window, the oldest second in it), the USD volume of the seconds after {day_from_s}
-- (= {ref_24h_s}), and the free space of the store's disk (the fullest, if several).
--
-- The 48 h are read as pieces: the 10-minute summaries (index_summary_10m, written by the index
-- runner) of the buckets inside them, and the priced rows themselves (one per second) of the buckets
-- that hold {from_s}, {ref_24h_s} and {ref_1h_s} and of those from the newest summary on. A
-- summarised bucket is then wholly before or wholly after each of those times, so its first and
-- last second stand for all of its seconds in the aggregates below. The rows come from
-- index_ticks_by_time, index_ticks sorted by time: those few minutes of every asset are a few of
-- its granules, where index_ticks (sorted by asset) would read all of a month's. Times are unix
-- seconds unless the name says ms; {bucket_s} is the summaries' length, bucket starts are multiples of it.
WITH
    -- Summaries stop at the newest one written, and at the bucket of {now_s}: rows from there on are read as they are.
    least(
        (SELECT toUnixTimestamp(max(bucket)) + {bucket_s:UInt32} FROM index_summary_10m WHERE bucket >= toDateTime({from_s:UInt32}, 'UTC')),
        intDiv({now_s:UInt32}, {bucket_s:UInt32}) * {bucket_s:UInt32}
    ) AS rows_from_s,
    intDiv({from_s:UInt32}, {bucket_s:UInt32}) * {bucket_s:UInt32} AS from_bucket_s,
    intDiv({ref_24h_s:UInt32}, {bucket_s:UInt32}) * {bucket_s:UInt32} AS ref_24h_bucket_s,
    intDiv({ref_1h_s:UInt32}, {bucket_s:UInt32}) * {bucket_s:UInt32} AS ref_1h_bucket_s
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
        max(last_s) AS latest_s,
        argMax(last_p, last_s) AS price,
        toUnixTimestamp64Milli(argMax(last_trade_at, last_s)) AS updatedAtMs,
        argMax(last_carried, last_s) AS carried,
        if(countIf(last_s <= {ref_1h_s:UInt32}) > 0,
           argMaxIf((last_p, last_s), last_s, last_s <= {ref_1h_s:UInt32}),
           argMin((first_p, first_s), first_s)) AS ref1h,
        if(countIf(last_s <= {ref_24h_s:UInt32}) > 0,
           argMaxIf((last_p, last_s), last_s, last_s <= {ref_24h_s:UInt32}),
           argMin((first_p, first_s), first_s)) AS ref24h,
        sumIf(volume_usd, first_s > {day_from_s:UInt32}) AS volume24hUsd
    FROM
    (
        SELECT
            asset,
            toUnixTimestamp(first_second) AS first_s,
            first_price AS first_p,
            toUnixTimestamp(last_second) AS last_s,
            last_price AS last_p,
            last_trade_at,
            last_status = 'fail_closed' AS last_carried,
            volume_usd
        FROM index_summary_10m FINAL
        WHERE asset IN {assets:Array(String)} AND priced_rows > 0
          AND bucket > toDateTime(from_bucket_s, 'UTC')
          AND bucket < toDateTime(rows_from_s, 'UTC')
          AND bucket NOT IN (toDateTime(ref_24h_bucket_s, 'UTC'), toDateTime(ref_1h_bucket_s, 'UTC'))
        UNION ALL
        SELECT
            asset,
            toUnixTimestamp(second) AS first_s,
            price AS first_p,
            toUnixTimestamp(second) AS last_s,
            price AS last_p,
            last_trade_at,
            status = 'fail_closed' AS last_carried,
            volume_usd
        FROM index_ticks_by_time FINAL
        WHERE asset IN {assets:Array(String)} AND status != 'none'
          AND second >= toDateTime({from_s:UInt32}, 'UTC') AND second <= toDateTime({now_s:UInt32}, 'UTC')
          AND (second < toDateTime(from_bucket_s + {bucket_s:UInt32}, 'UTC')
               OR (second >= toDateTime(ref_24h_bucket_s, 'UTC') AND second < toDateTime(ref_24h_bucket_s + {bucket_s:UInt32}, 'UTC'))
               OR (second >= toDateTime(ref_1h_bucket_s, 'UTC') AND second < toDateTime(ref_1h_bucket_s + {bucket_s:UInt32}, 'UTC'))
               OR second >= toDateTime(rows_from_s, 'UTC'))
    )
    GROUP BY asset
)
