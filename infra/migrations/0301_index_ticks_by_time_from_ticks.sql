-- Copies every block inserted into index_ticks into index_ticks_by_time (0300), as it is inserted.
CREATE MATERIALIZED VIEW IF NOT EXISTS index_ticks_by_time_from_ticks TO index_ticks_by_time AS
SELECT asset, second, price, status, volume_usd, last_trade_at, computed_at
FROM index_ticks
