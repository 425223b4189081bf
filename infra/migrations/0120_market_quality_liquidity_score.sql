-- The liquidity score of each market's latest book (aggregate/marketQuality.ts; formula in
-- aggregate/METHODOLOGY.md, "Market quality and exchange score"). Nullable: rows measured before
-- the score existed read null, never a made-up 0.
ALTER TABLE market_quality
    ADD COLUMN IF NOT EXISTS liquidity_score Nullable(UInt16)
    COMMENT '0 (illiquid) to 1000: weighted credit for the cost of buying and selling $100, $1k, $10k, $100k, $200k, times the 2 % depth balance; 0 when the book within 10 % of the mid holds under $100'
