-- Cascade: rolls each block inserted into candles_5m into 15m candles.
CREATE MATERIALIZED VIEW IF NOT EXISTS candles_15m_from_5m TO candles_15m AS
SELECT
    src.asset AS asset,
    toStartOfFifteenMinutes(src.bucket) AS bucket,
    src.venue AS venue, src.market AS market, src.quote AS quote,
    argMinMergeState(src.open) AS open,
    max(src.high) AS high,
    min(src.low) AS low,
    argMaxMergeState(src.close) AS close,
    sum(src.volume) AS volume,
    sum(src.quote_volume) AS quote_volume,
    sum(src.trade_count) AS trade_count
FROM candles_5m AS src
GROUP BY asset, bucket, venue, market, quote
