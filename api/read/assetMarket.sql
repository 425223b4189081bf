-- Everything the coin list, the coin profile, /v1/global and /v1/categories derive from, beside the
-- latest index price (aggregate/indexPrices/latestIndexPrices.sql): one row per asset we ever measured a
-- trade of on an index market (quotes {usd_quotes}, stablecoins at par: these are trade prices of
-- past buckets, whose stablecoin rate is not kept). Each part reads a bounded window (the all-time
-- part one row per asset), so the cost does not grow with the length of our history. See
-- assetMarket.ts for the rules; times are unix seconds unless the name says ms.
--
-- Reference prices ("the index price at or before T"): the latest point at or before T in the part's
-- window, or, when there is none (our history is shorter, or a gap), the oldest point in the window.
SELECT
    x.asset AS asset,
    d.high_24h AS high24h,
    d.low_24h AS low24h,
    h.ref_7d AS ref7d,
    h.ref_14d AS ref14d,
    h.ref_30d AS ref30d,
    h.high_7d AS high7d,
    h.low_7d AS low7d,
    h.high_30d AS high30d,
    h.low_30d AS low30d,
    y.ref_1y AS ref1y,
    y.high_1y AS high1y,
    y.low_1y AS low1y,
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
    -- Hourly index buckets of the last 31 days: 7 d / 14 d / 30 d references (the bucket's
    -- volume-weighted price) and the 7 d / 30 d high and low.
    SELECT
        asset,
        if(countIf(b <= {ref_7d_s:UInt32}) > 0, argMaxIf((vwap, b), b, b <= {ref_7d_s:UInt32}), argMin((vwap, b), b)) AS ref_7d,
        if(countIf(b <= {ref_14d_s:UInt32}) > 0, argMaxIf((vwap, b), b, b <= {ref_14d_s:UInt32}), argMin((vwap, b), b)) AS ref_14d,
        if(countIf(b <= {ref_30d_s:UInt32}) > 0, argMaxIf((vwap, b), b, b <= {ref_30d_s:UInt32}), argMin((vwap, b), b)) AS ref_30d,
        maxIf(hi, b >= {ref_7d_s:UInt32}) AS high_7d,
        minIf(lo, b >= {ref_7d_s:UInt32}) AS low_7d,
        maxIf(hi, b >= {ref_30d_s:UInt32}) AS high_30d,
        minIf(lo, b >= {ref_30d_s:UInt32}) AS low_30d
    FROM
    (
        SELECT asset, toUnixTimestamp(bucket) AS b, sum(quote_volume) / sum(volume) AS vwap, max(high) AS hi, min(low) AS lo
        FROM candles_1h
        WHERE asset IN {assets:Array(String)} AND quote IN {usd_quotes:Array(String)}
          AND bucket >= toDateTime({hour_from_s:UInt32}, 'UTC') AND bucket <= toDateTime({now_s:UInt32}, 'UTC')
        GROUP BY asset, bucket
    )
    GROUP BY asset
) AS h ON h.asset = x.asset
LEFT JOIN
(
    -- Daily index buckets of the last 395 days: the 1 y reference and the 1 y high and low.
    SELECT
        asset,
        if(countIf(b <= {ref_1y_s:UInt32}) > 0, argMaxIf((vwap, b), b, b <= {ref_1y_s:UInt32}), argMin((vwap, b), b)) AS ref_1y,
        maxIf(hi, b >= {ref_1y_s:UInt32}) AS high_1y,
        minIf(lo, b >= {ref_1y_s:UInt32}) AS low_1y
    FROM
    (
        SELECT asset, toUnixTimestamp(bucket) AS b, sum(quote_volume) / sum(volume) AS vwap, max(high) AS hi, min(low) AS lo
        FROM candles_1d
        WHERE asset IN {assets:Array(String)} AND quote IN {usd_quotes:Array(String)}
          AND bucket >= toDateTime({year_from_s:UInt32}, 'UTC') AND bucket <= toDateTime({now_s:UInt32}, 'UTC')
        GROUP BY asset, bucket
    )
    GROUP BY asset
) AS y ON y.asset = x.asset
SETTINGS join_use_nulls = 1
