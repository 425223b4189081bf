-- The hourly and daily index buckets before the live ones (assetMarket.sql reads those, from
-- {live_hour_from_s} and {live_day_from_s} on), per asset with a bucket in them: the 7 d / 14 d /
-- 30 d and 1 y references, the extremes of the 7 d / 30 d / 1 y ranges, and the oldest bucket (the
-- reference's stand-in when our history there is shorter). Every bound is a bucket start taken from
-- the hour the snapshot is in, so one read serves every snapshot of that hour (assetLongWindows.ts).
-- A point is (volume-weighted price of the bucket, its start); times are unix seconds. A reference
-- is the latest bucket starting at or before {ref_*_s}, a range the buckets starting after it.
SELECT
    coalesce(h.asset, y.asset) AS asset,
    h.has_ref_7d AS hasRef7d,
    h.ref_7d AS ref7d,
    h.has_ref_14d AS hasRef14d,
    h.ref_14d AS ref14d,
    h.has_ref_30d AS hasRef30d,
    h.ref_30d AS ref30d,
    h.oldest_hour AS oldestHour,
    h.high_7d AS high7d,
    h.low_7d AS low7d,
    h.high_30d AS high30d,
    h.low_30d AS low30d,
    y.has_ref_1y AS hasRef1y,
    y.ref_1y AS ref1y,
    y.oldest_day AS oldestDay,
    y.high_1y AS high1y,
    y.low_1y AS low1y
FROM
(
    SELECT
        asset,
        countIf(b <= {ref_7d_s:UInt32}) > 0 AS has_ref_7d,
        argMaxIf((vwap, b), b, b <= {ref_7d_s:UInt32}) AS ref_7d,
        countIf(b <= {ref_14d_s:UInt32}) > 0 AS has_ref_14d,
        argMaxIf((vwap, b), b, b <= {ref_14d_s:UInt32}) AS ref_14d,
        countIf(b <= {ref_30d_s:UInt32}) > 0 AS has_ref_30d,
        argMaxIf((vwap, b), b, b <= {ref_30d_s:UInt32}) AS ref_30d,
        argMin((vwap, b), b) AS oldest_hour,
        maxIfOrNull(hi, b > {ref_7d_s:UInt32}) AS high_7d,
        minIfOrNull(lo, b > {ref_7d_s:UInt32}) AS low_7d,
        maxIfOrNull(hi, b > {ref_30d_s:UInt32}) AS high_30d,
        minIfOrNull(lo, b > {ref_30d_s:UInt32}) AS low_30d
    FROM
    (
        SELECT asset, toUnixTimestamp(bucket) AS b, sum(quote_volume) / sum(volume) AS vwap, max(high) AS hi, min(low) AS lo
        FROM candles_1h
        WHERE asset IN {assets:Array(String)} AND quote IN {usd_quotes:Array(String)}
          AND bucket >= toDateTime({hour_from_s:UInt32}, 'UTC') AND bucket < toDateTime({live_hour_from_s:UInt32}, 'UTC')
        GROUP BY asset, bucket
    )
    GROUP BY asset
) AS h
FULL OUTER JOIN
(
    SELECT
        asset,
        countIf(b <= {ref_1y_s:UInt32}) > 0 AS has_ref_1y,
        argMaxIf((vwap, b), b, b <= {ref_1y_s:UInt32}) AS ref_1y,
        argMin((vwap, b), b) AS oldest_day,
        maxIfOrNull(hi, b > {ref_1y_s:UInt32}) AS high_1y,
        minIfOrNull(lo, b > {ref_1y_s:UInt32}) AS low_1y
    FROM
    (
        SELECT asset, toUnixTimestamp(bucket) AS b, sum(quote_volume) / sum(volume) AS vwap, max(high) AS hi, min(low) AS lo
        FROM candles_1d
        WHERE asset IN {assets:Array(String)} AND quote IN {usd_quotes:Array(String)}
          AND bucket >= toDateTime({year_from_s:UInt32}, 'UTC') AND bucket < toDateTime({live_day_from_s:UInt32}, 'UTC')
        GROUP BY asset, bucket
    )
    GROUP BY asset
) AS y ON y.asset = h.asset
SETTINGS join_use_nulls = 1
