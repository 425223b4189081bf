-- One venue's markets over the 1-minute candles since {from}: last price, trades and volume.
SELECT
    c.market AS market,
    c.asset AS asset,
    c.quote AS quote,
    argMaxMerge(c.close) AS price,
    sum(c.trade_count) AS trades24h,
    sum(c.quote_volume) AS volume24h
FROM candles_1m AS c
WHERE c.venue = {venue:String} AND c.bucket >= toDateTime({from_s:UInt32}, 'UTC') AND c.quote IN ('USD', 'USDT', 'USDC')
GROUP BY c.market, c.asset, c.quote
ORDER BY volume24h DESC, market
