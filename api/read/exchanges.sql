-- Per venue, over the 1-minute candles since {from}: markets that traded, trades, and volume in
-- USD: markets quoted in {usd_quotes}, each quote at its USD rate {usd_per_quote} (the USD
-- stablecoins at their measured rate, as the index).
SELECT
    c.venue AS venue,
    uniqExact(c.market) AS markets,
    sum(c.trade_count) AS trades24h,
    sum(c.quote_volume * transform(c.quote, {usd_quotes:Array(String)}, {usd_per_quote:Array(Float64)}, 0.)) AS volume24h
FROM candles_1m AS c
WHERE c.bucket >= toDateTime({from_s:UInt32}, 'UTC') AND c.quote IN {usd_quotes:Array(String)}
GROUP BY c.venue
