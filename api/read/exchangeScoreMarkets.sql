-- Exchange score inputs, per venue and market quoted in {usd_quotes} that traded since {from_s}: its
-- USD volume (each quote at its USD rate {usd_per_quote}, the stablecoins measured as by the index)
-- and, when its latest book was measured at or after {fresh_ms}, that book's liquidity score (null
-- otherwise: no fresh book, or measured before the score existed).
SELECT
    v.venue AS venue,
    v.market AS market,
    v.volume24h AS volume24h,
    q.liquidity_score AS liquidityScore
FROM
(
    SELECT c.venue AS venue, c.market AS market, sum(c.quote_volume * transform(c.quote, {usd_quotes:Array(String)}, {usd_per_quote:Array(Float64)}, 0.)) AS volume24h
    FROM candles_1m AS c
    WHERE c.bucket >= toDateTime({from_s:UInt32}, 'UTC') AND c.quote IN {usd_quotes:Array(String)}
    GROUP BY c.venue, c.market
) AS v
LEFT JOIN
(
    SELECT venue, market, liquidity_score
    FROM market_quality FINAL
    WHERE ts >= fromUnixTimestamp64Milli({fresh_ms:Int64}, 'UTC')
) AS q ON q.venue = v.venue AND q.market = v.market
