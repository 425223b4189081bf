-- The one read of the exchanges' markets: per venue ({venue}; '' reads every venue) and market
-- quoted in {usd_quotes} that traded in the 1-minute buckets since {from_s}: its asset and quote,
-- last price (in the quote), trades, USD volume (each quote at its USD rate {usd_per_quote}: the
-- stablecoins at their measured rate, as the index), the part of its quote volume since {today_s}
-- (the start of the current UTC day, inside the 24 h) at par, as the daily volume history counts it,
-- and, when its latest book was measured at or after {fresh_ms}, that book's liquidity score (null
-- otherwise: no fresh book, or measured before the score existed). An exchange row's totals, its
-- score's markets and the current day of its history are all summed from these rows, so that they
-- agree with the markets served beside them.
SELECT
    v.venue AS venue,
    v.market AS market,
    v.asset AS asset,
    v.quote AS quote,
    v.price AS price,
    v.trades24h AS trades24h,
    v.volume24h AS volume24h,
    v.volumeToday AS volumeToday,
    q.liquidity_score AS liquidityScore
FROM
(
    SELECT
        c.venue AS venue,
        c.market AS market,
        c.asset AS asset,
        c.quote AS quote,
        argMaxMerge(c.close) AS price,
        sum(c.trade_count) AS trades24h,
        sum(c.quote_volume * transform(c.quote, {usd_quotes:Array(String)}, {usd_per_quote:Array(Float64)}, 0.)) AS volume24h,
        sumIf(c.quote_volume, c.bucket >= toDateTime({today_s:UInt32}, 'UTC')) AS volumeToday
    FROM candles_1m AS c
    WHERE ({venue:String} = '' OR c.venue = {venue:String})
      AND c.bucket >= toDateTime({from_s:UInt32}, 'UTC') AND c.quote IN {usd_quotes:Array(String)}
    GROUP BY c.venue, c.market, c.asset, c.quote
) AS v
LEFT JOIN
(
    SELECT venue, market, liquidity_score
    FROM market_quality FINAL
    WHERE ({venue:String} = '' OR venue = {venue:String}) AND ts >= fromUnixTimestamp64Milli({fresh_ms:Int64}, 'UTC')
) AS q ON q.venue = v.venue AND q.market = v.market
ORDER BY volume24h DESC, venue, market
