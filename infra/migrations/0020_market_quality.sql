-- The latest order-book quality measurement of each market (aggregate/marketQuality.ts): spread,
-- depth within 1 % and 2 % of the mid, and the cost of buying and selling $10k, $100k and $1M.
-- One row per market survives merges (the newest `ts`); read with FINAL.
CREATE TABLE IF NOT EXISTS market_quality
(
    asset       LowCardinality(String)  COMMENT 'catalog id of the base asset',
    venue       LowCardinality(String),
    market      LowCardinality(String),
    quote       LowCardinality(String),
    ts          DateTime64(3, 'UTC')    COMMENT 'time of the book the row was measured on',
    spread_bps  Float64                 COMMENT '(best ask - best bid) / mid, bps',
    depth_bid_2 Float64                 COMMENT 'USD of bids within 2 % below the mid',
    depth_ask_2 Float64                 COMMENT 'USD of asks within 2 % above the mid',
    depth_bid_1 Float64                 COMMENT 'USD of bids within 1 % below the mid',
    depth_ask_1 Float64                 COMMENT 'USD of asks within 1 % above the mid',
    cost_buy    Map(String, Nullable(Float64)) COMMENT 'order size in USD -> cost in bps vs the mid; null = the book could not fill it',
    cost_sell   Map(String, Nullable(Float64)) COMMENT 'same, for a sell'
)
ENGINE = ReplacingMergeTree(ts)
ORDER BY (asset, venue, market)
