-- Listings (aggregate/METHODOLOGY.md, "Listings"): per asset, its first print on any venue we
-- track, kept when that print came after the warm-up of its venue (the venue's own first print in
-- our store + {warmup_ms}) and not before {since_ms}. firstUsdPrice: the price of its first print
-- in a USD, USDT or USDC market, ordered by (ts, venue, market, trade_id); 0 when it has none.
WITH
pairs AS (
    SELECT asset, venue, min(first_ts) AS first_ts, argMinMerge(first_usd) AS first_usd
    FROM asset_first_prints
    GROUP BY asset, venue
),
venue_starts AS (
    SELECT venue, min(first_ts) AS started
    FROM pairs
    GROUP BY venue
)
SELECT
    p.asset AS asset,
    toUnixTimestamp64Milli(min(p.first_ts)) AS listedAt,
    argMin(p.venue, (p.first_ts, p.venue)) AS firstVenue,
    toUnixTimestamp64Milli(argMin(s.started, (p.first_ts, p.venue))) AS venueStartedAt,
    argMinIf(p.first_usd.4, (p.first_usd.1, p.venue, p.first_usd.2, p.first_usd.3), p.first_usd.4 > 0) AS firstUsdPrice
FROM pairs AS p
INNER JOIN venue_starts AS s ON s.venue = p.venue
GROUP BY p.asset
HAVING listedAt >= venueStartedAt + {warmup_ms:Int64} AND listedAt >= {since_ms:Int64}
ORDER BY listedAt DESC, asset
