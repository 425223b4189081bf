-- Every market of one asset that traded since {from}: its last price (by trade time, then id),
-- the time of its last trade and its volume in the quote currency. Markets quoted in {usd_quotes}
-- only (markets.ts values them in USD); others cannot be valued here.
SELECT
    t.venue AS venue,
    t.market AS market,
    t.quote AS quote,
    argMax(t.price, (t.ts, t.trade_id)) AS price,
    toUnixTimestamp64Milli(max(t.ts)) AS updatedAt,
    sum(t.price * t.quantity) AS quoteVolume
FROM trades AS t
WHERE t.asset = {asset:String}
  AND t.ts >= fromUnixTimestamp64Milli({from:Int64}, 'UTC')
  AND t.quote IN {usd_quotes:Array(String)}
GROUP BY t.venue, t.market, t.quote
ORDER BY quoteVolume DESC, venue, market
