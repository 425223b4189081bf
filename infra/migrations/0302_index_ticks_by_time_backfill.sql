-- The index rows stored before index_ticks_by_time existed. A row inserted while 0301 and this file
-- ran is copied twice: the same key and version, so FINAL reads it once.
INSERT INTO index_ticks_by_time
SELECT asset, second, price, status, volume_usd, last_trade_at, computed_at
FROM index_ticks
