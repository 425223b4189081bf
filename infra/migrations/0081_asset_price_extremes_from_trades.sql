-- Keeps asset_price_extremes up to date as trades arrive. Only the markets of the index price
-- (quotes USD and, at par, USDT and USDC, as 0017), so the extremes are in USD like the price.
CREATE MATERIALIZED VIEW IF NOT EXISTS asset_price_extremes_from_trades TO asset_price_extremes AS
SELECT
    asset,
    max((price, -toUnixTimestamp64Milli(ts))) AS high,
    min((price, toUnixTimestamp64Milli(ts))) AS low,
    min(ts) AS first_trade_at
FROM trades
WHERE quote IN ('USD', 'USDT', 'USDC')
GROUP BY asset
