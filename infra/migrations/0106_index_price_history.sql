-- The index price, merged and ready to read (same columns as before 0105, plus status and
-- volume_usd): one row per second in which a constituent traded or the index changed, and at least
-- one a day per asset with a price; the index of any second is the latest row at or before it. What /v1/prices, the coin endpoints, FX (btc,
-- eth) and charts read.
CREATE VIEW IF NOT EXISTS index_price_history AS
SELECT
    t.asset AS asset,
    t.second AS second,
    t.price AS price,
    t.volume AS volume,
    t.trade_count AS trade_count,
    t.last_trade_at AS last_trade_at,
    length(t.constituents) AS constituent_count,
    t.status AS status,
    t.volume_usd AS volume_usd
FROM index_ticks AS t FINAL
WHERE t.status != 'none'
