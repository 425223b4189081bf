-- Extremes of the trades stored before asset_price_extremes_from_trades existed. Runs after the
-- view is created, so no trade falls between the two; the overlap is harmless (max, min).
INSERT INTO asset_price_extremes
SELECT
    asset,
    max((price, -toUnixTimestamp64Milli(ts))) AS high,
    min((price, toUnixTimestamp64Milli(ts))) AS low,
    min(ts) AS first_trade_at
FROM trades
WHERE quote IN ('USD', 'USDT', 'USDC')
GROUP BY asset
