-- Cascade: rolls each block inserted into candles_1d into 1w candles.
CREATE MATERIALIZED VIEW IF NOT EXISTS candles_1w_from_1d TO candles_1w AS
SELECT
    src.asset AS asset,
    toDateTime(toMonday(src.bucket), 'UTC') AS bucket,
    src.venue AS venue, src.market AS market, src.quote AS quote,
    argMinMergeState(src.open) AS open,
    max(src.high) AS high,
    min(src.low) AS low,
    argMaxMergeState(src.close) AS close,
    sum(src.volume) AS volume,
    sum(src.quote_volume) AS quote_volume,
    sum(src.trade_count) AS trade_count
FROM candles_1d AS src
GROUP BY asset, bucket, venue, market, quote
