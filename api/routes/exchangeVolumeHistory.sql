-- One venue's daily USD volume over the last {days} UTC days, oldest first.
SELECT
    toString(toDate(c.bucket)) AS date,
    sum(c.quote_volume) AS volume
FROM candles_1d AS c
WHERE c.venue = {venue:String} AND c.bucket >= toDateTime({from_s:UInt32}, 'UTC') AND c.quote IN ('USD', 'USDT', 'USDC')
GROUP BY c.bucket
ORDER BY c.bucket
