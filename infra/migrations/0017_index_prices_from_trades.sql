-- Included markets: quotes in USD and, until measured stablecoin rates exist, USDT and USDC at par.
CREATE MATERIALIZED VIEW IF NOT EXISTS index_prices_from_trades TO index_prices AS
SELECT
    asset,
    toDateTime(toStartOfSecond(ts), 'UTC') AS second,
    sum(price * quantity) AS notional,
    sum(quantity) AS volume,
    count() AS trade_count,
    max(ts) AS last_trade_at,
    uniqExactState(concat(venue, ':', market)) AS constituents
FROM trades
WHERE quote IN ('USD', 'USDT', 'USDC')
GROUP BY asset, second
