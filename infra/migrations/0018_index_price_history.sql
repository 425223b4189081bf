-- The index price of every second that had trades, merged and ready to read.
CREATE VIEW IF NOT EXISTS index_price_history AS
SELECT
    ip.asset AS asset,
    ip.second AS second,
    sum(ip.notional) / sum(ip.volume) AS price,
    sum(ip.volume) AS volume,
    sum(ip.trade_count) AS trade_count,
    max(ip.last_trade_at) AS last_trade_at,
    uniqExactMerge(ip.constituents) AS constituent_count
FROM index_prices AS ip
GROUP BY ip.asset, ip.second
