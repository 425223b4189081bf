-- Rolls each block of trades into per-market seconds (every quote: the engine decides which count).
CREATE MATERIALIZED VIEW IF NOT EXISTS market_seconds_from_trades TO market_seconds AS
SELECT
    asset,
    venue,
    market,
    quote,
    toDateTime(toStartOfSecond(ts), 'UTC') AS second,
    sum(price * quantity) AS notional,
    sum(quantity) AS volume,
    count() AS trade_count,
    argMaxState(price, (ts, trade_id)) AS last_price,
    max(ts) AS last_trade_at
FROM trades
GROUP BY asset, venue, market, quote, second
