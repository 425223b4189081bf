-- /v1/chains: per chain of the registry, over the swaps since {from_s} (8 days before now):
-- USD volume, swaps, active pools and active DEXes of the last 24 h (ts >= {day_s}), the USD
-- volume of the 24 h before that and of the 24 h a week before ({prev_s}..{day_s},
-- {week_s}..{week_end_s}); the pool and token registry sizes; and the timestamp where the indexed
-- history starts (its first stored block: see aggregate/jobs/chains/evmIndexer.ts).
SELECT
    r.chain AS id,
    r.name AS name,
    s.volume24h AS volume24h,
    s.swaps24h AS swaps24h,
    s.pools24h AS pools24h,
    s.dexes24h AS dexes24h,
    s.volumePrev24h AS volumePrev24h,
    s.volumeWeekAgo24h AS volumeWeekAgo24h,
    p.pools AS poolsIndexed,
    p.tokens AS tokensIndexed,
    toUnixTimestamp(b.first_ts) AS historyFrom
FROM
(
    SELECT chain, argMax(name, updated_at) AS name FROM chain_registry GROUP BY chain
) AS r
LEFT JOIN
(
    SELECT
        chain,
        sumIf(ifNull(usd, 0), ts >= toDateTime({day_s:UInt32}, 'UTC')) AS volume24h,
        countIf(ts >= toDateTime({day_s:UInt32}, 'UTC')) AS swaps24h,
        uniqExactIf(pool, ts >= toDateTime({day_s:UInt32}, 'UTC')) AS pools24h,
        uniqExactIf(dex, ts >= toDateTime({day_s:UInt32}, 'UTC')) AS dexes24h,
        sumIf(ifNull(usd, 0), ts >= toDateTime({prev_s:UInt32}, 'UTC') AND ts < toDateTime({day_s:UInt32}, 'UTC')) AS volumePrev24h,
        sumIf(ifNull(usd, 0), ts >= toDateTime({week_s:UInt32}, 'UTC') AND ts < toDateTime({week_end_s:UInt32}, 'UTC')) AS volumeWeekAgo24h
    FROM chain_swaps FINAL
    WHERE ts >= toDateTime({from_s:UInt32}, 'UTC')
    GROUP BY chain
) AS s ON s.chain = r.chain
LEFT JOIN
(
    SELECT chain, uniqExact(pool) AS pools, uniqExact(token) AS tokens
    FROM chain_pools FINAL
    ARRAY JOIN [token0, token1] AS token
    GROUP BY chain
) AS p ON p.chain = r.chain
LEFT JOIN
(
    SELECT chain, min(ts) AS first_ts FROM chain_blocks GROUP BY chain
) AS b ON b.chain = r.chain
SETTINGS join_use_nulls = 1
