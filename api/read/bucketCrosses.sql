-- The measured rule of aggregate/currency/fxMeasured.ts over the buckets of {table} starting in
-- [{from_s}, {to_s}]: per bucket, venue and bridge asset that traded against both {currency} and
-- USD within that bucket, the sums behind each leg's VWAP.
SELECT
    toUnixTimestamp(bucket) * 1000 AS t,
    venue,
    sumIf(quote_volume, quote = {currency:String}) AS fiatQuoteVolume,
    sumIf(volume, quote = {currency:String}) AS fiatVolume,
    sumIf(quote_volume, quote != {currency:String}) AS usdQuoteVolume,
    sumIf(volume, quote != {currency:String}) AS usdVolume
FROM {table:Identifier}
WHERE asset IN {assets:Array(String)} AND quote IN {quotes:Array(String)}
  AND bucket >= toDateTime({from_s:UInt32}, 'UTC') AND bucket <= toDateTime({to_s:UInt32}, 'UTC')
GROUP BY bucket, venue, asset
HAVING fiatVolume > 0 AND usdVolume > 0
ORDER BY t
