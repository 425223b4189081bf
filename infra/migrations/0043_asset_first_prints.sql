-- The first trade we measured of each asset on each venue: what listings (/v1/new-coins) are
-- derived from (aggregate/METHODOLOGY.md, "Listings"). min and argMin are idempotent, so a row
-- written twice (a backfill overlapping the view) changes nothing. Read with
-- min(first_ts), argMinMerge(first_usd) ... GROUP BY asset, venue.
CREATE TABLE IF NOT EXISTS asset_first_prints
(
    asset     LowCardinality(String)                              COMMENT 'catalog id of the asset',
    venue     LowCardinality(String)                              COMMENT 'venue id, e.g. binance',
    first_ts  SimpleAggregateFunction(min, DateTime64(3, 'UTC'))  COMMENT 'time of its first trade on the venue, any quote',
    first_usd AggregateFunction(argMin, Tuple(DateTime64(3, 'UTC'), String, String, Float64), Tuple(DateTime64(3, 'UTC'), String, String))
              COMMENT '(ts, market, trade_id, price) of its first trade on the venue in a USD, USDT or USDC market, by (ts, market, trade_id); price 0 when it has none'
)
ENGINE = AggregatingMergeTree
ORDER BY (asset, venue)
SETTINGS non_replicated_deduplication_window = 1000
