-- USD volume per asset over the 1-minute candles since {from_s}: markets quoted in {usd_quotes}, each
-- quote at its USD rate {usd_per_quote} (the USD stablecoins at their measured rate, as the index).
SELECT asset, sum(quote_volume * transform(quote, {usd_quotes:Array(String)}, {usd_per_quote:Array(Float64)}, 0.)) AS volume24h
FROM candles_1m
WHERE asset IN {assets:Array(String)} AND bucket >= toDateTime({from_s:UInt32}, 'UTC') AND quote IN {usd_quotes:Array(String)}
GROUP BY asset
