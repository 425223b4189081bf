-- Per venue: how many of its markets have a connection status (market_connections, written by the
-- status sink from the collectors' `statuses` topic), how many of them the latest status says are
-- connected, and when the latest status of any of them was published (unix ms).
SELECT
    venue,
    count() AS markets,
    countIf(connected) AS connectedMarkets,
    toUnixTimestamp64Milli(max(at)) AS changedAt
FROM
(
    SELECT venue, market, argMax(connected, ts) AS connected, max(ts) AS at
    FROM market_connections
    GROUP BY venue, market
)
GROUP BY venue
ORDER BY venue
