-- Exchange score inputs, per venue: the minutes from {from_s} up to {to_s} (exclusive) in which
-- any of its markets traded (every quote: any trade shows the collector was receiving), and the
-- first of them. The earliest first minute over all venues is where our own history starts.
SELECT
    c.venue AS venue,
    uniqExact(c.bucket) AS tradedMinutes,
    toUnixTimestamp(min(c.bucket)) AS firstMinute
FROM candles_1m AS c
WHERE c.bucket >= toDateTime({from_s:UInt32}, 'UTC') AND c.bucket < toDateTime({to_s:UInt32}, 'UTC')
GROUP BY c.venue
