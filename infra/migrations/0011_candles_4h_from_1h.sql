-- Cascade: rolls each block inserted into candles_1h into 4h candles.
CREATE MATERIALIZED VIEW IF NOT EXISTS candles_4h_from_1h TO candles_4h AS
SELECT
    src.asset AS asset,
    toStartOfInterval(src.bucket, INTERVAL 4 HOUR) AS bucket,
    src.venue AS venue, src.market AS market, src.quote AS quote,
    argMinMergeState(src.open) AS open,
    max(src.high) AS high,
    min(src.low) AS low,
    argMaxMergeState(src.close) AS close,
    sum(src.volume) AS volume,
    sum(src.quote_volume) AS quote_volume,
    sum(src.trade_count) AS trade_count
FROM candles_1h AS src
GROUP BY asset, bucket, venue, market, quote
