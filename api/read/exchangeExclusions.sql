-- Exchange score inputs, per venue: the markets the index judged on their data at or after
-- {fresh_ms} (all but those it set aside first, for {unjudged}), and how many of them it excluded
-- for one of {flagged}.
SELECT
    venue,
    countIf(NOT (excluded AND reason IN {unjudged:Array(String)})) AS judgedMarkets,
    countIf(excluded AND reason IN {flagged:Array(String)}) AS flaggedMarkets
FROM index_constituents_latest FINAL
WHERE ts >= fromUnixTimestamp64Milli({fresh_ms:Int64}, 'UTC')
GROUP BY venue
