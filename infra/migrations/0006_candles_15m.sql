-- 15m candles per market: the same columns, engine, key and settings as candles_1m (see 0002).
CREATE TABLE IF NOT EXISTS candles_15m AS candles_1m
