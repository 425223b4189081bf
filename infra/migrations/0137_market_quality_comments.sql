-- Comments on the market_quality columns that were created without one (infra/SCHEMA.md shows them).
ALTER TABLE market_quality
    COMMENT COLUMN venue 'venue id, e.g. binance',
    COMMENT COLUMN market 'the venue''s market symbol, e.g. BTCUSDT',
    COMMENT COLUMN quote 'quote currency ticker of the market, e.g. USDT'
