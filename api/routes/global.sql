-- Markets (venue and market symbol, any quote) with a trade in the 1-minute buckets starting in
-- the last 24 h.
SELECT uniqExact(venue, market) AS markets
FROM candles_1m
WHERE bucket >= toDateTime({from_s:UInt32}, 'UTC') AND bucket <= toDateTime({now_s:UInt32}, 'UTC')
