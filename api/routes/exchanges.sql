-- Per venue, over the 1-minute candles since {from}: markets that traded, trades, and volume in
-- USD (markets quoted in USD or a USD stablecoin, at par, as the index price).
SELECT
    c.venue AS venue,
    uniqExact(c.market) AS markets,
    sum(c.trade_count) AS trades24h,
    sum(c.quote_volume) AS volume24h
FROM candles_1m AS c
WHERE c.bucket >= toDateTime({from_s:UInt32}, 'UTC') AND c.quote IN ('USD', 'USDT', 'USDC')
GROUP BY c.venue
