-- One venue's daily USD volume over the UTC days from {from_s} up to {to_s} (the start of the
-- current day, whose volume exchange.ts sums from the markets it serves), oldest first: markets
-- quoted in {usd_quotes}, the USD stablecoins at par (the measured rate of a past day is not kept,
-- and the current one would misstate it as much).
SELECT
    toString(toDate(c.bucket)) AS date,
    sum(c.quote_volume) AS volume
FROM candles_1d AS c
WHERE c.venue = {venue:String} AND c.bucket >= toDateTime({from_s:UInt32}, 'UTC') AND c.bucket < toDateTime({to_s:UInt32}, 'UTC')
  AND c.quote IN {usd_quotes:Array(String)}
GROUP BY c.bucket
ORDER BY c.bucket
