-- First prints of the trades stored before asset_first_prints_from_trades existed. Runs after the
-- view is created, so no trade falls between the two; the overlap is harmless (min, argMin).
INSERT INTO asset_first_prints
SELECT
    asset,
    venue,
    min(ts) AS first_ts,
    argMinStateIf((ts, market, trade_id, price), (ts, market, trade_id), quote IN ('USD', 'USDT', 'USDC')) AS first_usd
FROM trades
GROUP BY asset, venue
