-- Rolls each block of liquidations into per-minute sums.
CREATE MATERIALIZED VIEW IF NOT EXISTS liquidations_1m_from_liquidations TO liquidations_1m AS
SELECT
    toDateTime(toStartOfMinute(src.ts), 'UTC') AS bucket,
    src.venue AS venue,
    src.asset AS asset,
    src.position_side AS position_side,
    sum(ifNull(src.value_usd, 0)) AS value_usd,
    sum(src.quantity) AS quantity,
    countIf(src.value_usd IS NOT NULL) AS valued,
    countIf(src.value_usd IS NULL) AS unvalued,
    max(toUInt8(src.sampled)) AS sampled,
    max(src.ts) AS last_ts
FROM liquidations AS src
GROUP BY bucket, venue, asset, position_side
