-- Comments on the candles_15m columns that were created without one (infra/SCHEMA.md shows them).
ALTER TABLE candles_15m
    COMMENT COLUMN venue 'venue id, e.g. binance',
    COMMENT COLUMN market 'the venue''s market symbol, e.g. BTCUSDT',
    COMMENT COLUMN high 'highest trade price, quote currency',
    COMMENT COLUMN low 'lowest trade price, quote currency',
    COMMENT COLUMN trade_count 'trades in the interval'
