-- Rolls each block of trades into 1m candles.
CREATE MATERIALIZED VIEW IF NOT EXISTS candles_1m_from_trades TO candles_1m AS
SELECT
    asset,
    toDateTime(toStartOfMinute(ts), 'UTC') AS bucket,
    venue, market, quote,
    argMinState(price, (ts, trade_id)) AS open,
    max(price) AS high,
    min(price) AS low,
    argMaxState(price, (ts, trade_id)) AS close,
    sum(quantity) AS volume,
    sum(price * quantity) AS quote_volume,
    count() AS trade_count
FROM trades
GROUP BY asset, bucket, venue, market, quote
