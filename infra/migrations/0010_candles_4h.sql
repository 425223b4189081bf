-- 4h candles per market: the same columns, engine, key and settings as candles_1m (see 0002).
CREATE TABLE IF NOT EXISTS candles_4h AS candles_1m
