-- Keeps the first print of each asset on each venue as trades arrive. argMinStateIf: the plain
-- argMin state, fed only by trades of index-quoted markets (USD, USDT, USDC at par, as 0017).
CREATE MATERIALIZED VIEW IF NOT EXISTS asset_first_prints_from_trades TO asset_first_prints AS
SELECT
    asset,
    venue,
    min(ts) AS first_ts,
    argMinStateIf((ts, market, trade_id, price), (ts, market, trade_id), quote IN ('USD', 'USDT', 'USDC')) AS first_usd
FROM trades
GROUP BY asset, venue
