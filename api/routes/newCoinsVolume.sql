-- USD volume per asset over the 1-minute candles since {from_s}: markets quoted in USD or a USD
-- stablecoin, at par, as the index price.
SELECT asset, sum(quote_volume) AS volume24h
FROM candles_1m
WHERE asset IN {assets:Array(String)} AND bucket >= toDateTime({from_s:UInt32}, 'UTC') AND quote IN ('USD', 'USDT', 'USDC')
GROUP BY asset
