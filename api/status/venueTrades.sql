-- Per venue, from the per-market seconds of the stored trades since {from_s}: the trades whose
-- second is at or after {rate_from_s} (the rate window), and the time of the last trade (unix ms).
SELECT
    venue,
    sumIf(trade_count, second >= toDateTime({rate_from_s:UInt32}, 'UTC')) AS trades,
    toUnixTimestamp64Milli(max(last_trade_at)) AS lastTradeAt
FROM market_seconds
WHERE second >= toDateTime({from_s:UInt32}, 'UTC')
GROUP BY venue
