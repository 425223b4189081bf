-- Cascade: rolls each block inserted into candles_4h into 1d candles.
CREATE MATERIALIZED VIEW IF NOT EXISTS candles_1d_from_4h TO candles_1d AS
SELECT
    src.asset AS asset,
    toStartOfDay(src.bucket) AS bucket,
    src.venue AS venue, src.market AS market, src.quote AS quote,
    argMinMergeState(src.open) AS open,
    max(src.high) AS high,
    min(src.low) AS low,
    argMaxMergeState(src.close) AS close,
    sum(src.volume) AS volume,
    sum(src.quote_volume) AS quote_volume,
    sum(src.trade_count) AS trade_count
FROM candles_4h AS src
GROUP BY asset, bucket, venue, market, quote
