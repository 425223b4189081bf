-- Everything the coin list, the coin profile, /v1/global and /v1/categories derive from, beside the
-- latest index price (aggregate/indexPrices/latestIndexPrices.sql) and the hourly and daily windows
-- before the live buckets (assetLongWindows.sql): one row per asset we ever measured a trade of on
-- an index market (quotes {usd_quotes}, stablecoins at par: these are trade prices of past buckets,
-- whose stablecoin rate is not kept). Each part reads a bounded window (the all-time part one row
-- per asset), so the cost does not grow with the length of our history. See assetMarket.ts for the
-- rules; times are unix seconds unless the name says ms. A bucket point is (volume-weighted price
-- of the bucket, its start).
SELECT
    x.asset AS asset,
    d.high_24h AS high24h,
    d.low_24h AS low24h,
    h.oldest_hour AS oldestHour,
    h.hour_high AS hourHigh,
    h.hour_low AS hourLow,
    y.oldest_day AS oldestDay,
    y.day_high AS dayHigh,
    y.day_low AS dayLow,
    x.ath AS ath,
    x.atl AS atl,
    x.first_trade_at_ms AS firstTradeAtMs
FROM
(
    -- All-time extremes and first trade, kept per asset as trades arrive (migration 0080).
    SELECT
        asset,
        (tupleElement(max(high), 1), -tupleElement(max(high), 2)) AS ath,
        (tupleElement(min(low), 1), tupleElement(min(low), 2)) AS atl,
        toUnixTimestamp64Milli(min(first_trade_at)) AS first_trade_at_ms
    FROM asset_price_extremes
    WHERE asset IN {assets:Array(String)}
    GROUP BY asset
) AS x
LEFT JOIN
(
    -- 24 h high and low: trade extremes of the index markets, 1-minute buckets starting in the last 24 h.
    SELECT asset, max(high) AS high_24h, min(low) AS low_24h
    FROM candles_1m
    WHERE asset IN {assets:Array(String)} AND quote IN {usd_quotes:Array(String)}
      AND bucket >= toDateTime({day_from_s:UInt32}, 'UTC') AND bucket <= toDateTime({now_s:UInt32}, 'UTC')
    GROUP BY asset
) AS d ON d.asset = x.asset
LEFT JOIN
(
    -- The live hourly buckets (from {live_hour_from_s} on: the current hour and the one before it,
    -- which late trades may still change): their oldest bucket and extremes, added to the hourly
    -- windows before them (assetLongWindows.sql).
    SELECT asset, argMin((vwap, b), b) AS oldest_hour, max(hi) AS hour_high, min(lo) AS hour_low
    FROM
    (
        SELECT asset, toUnixTimestamp(bucket) AS b, sum(quote_volume) / sum(volume) AS vwap, max(high) AS hi, min(low) AS lo
        FROM candles_1h
        WHERE asset IN {assets:Array(String)} AND quote IN {usd_quotes:Array(String)}
          AND bucket >= toDateTime({live_hour_from_s:UInt32}, 'UTC') AND bucket <= toDateTime({now_s:UInt32}, 'UTC')
        GROUP BY asset, bucket
    )
    GROUP BY asset
) AS h ON h.asset = x.asset
LEFT JOIN
(
    -- The live daily buckets (from {live_day_from_s} on: today and yesterday), likewise.
    SELECT asset, argMin((vwap, b), b) AS oldest_day, max(hi) AS day_high, min(lo) AS day_low
    FROM
    (
        SELECT asset, toUnixTimestamp(bucket) AS b, sum(quote_volume) / sum(volume) AS vwap, max(high) AS hi, min(low) AS lo
        FROM candles_1d
        WHERE asset IN {assets:Array(String)} AND quote IN {usd_quotes:Array(String)}
          AND bucket >= toDateTime({live_day_from_s:UInt32}, 'UTC') AND bucket <= toDateTime({now_s:UInt32}, 'UTC')
        GROUP BY asset, bucket
    )
    GROUP BY asset
) AS y ON y.asset = x.asset
SETTINGS join_use_nulls = 1
