-- Discovered assets joined into another asset by the operator's identities file
-- (infra/catalog/identities.ts; aggregate/jobs/identityJoins.ts): the discovered id stays an alias
-- of the asset it joined, and its history was moved there (prices over its scale, quantities times
-- it). The newest row of an alias wins: read with FINAL.
CREATE TABLE IF NOT EXISTS asset_aliases
(
    alias              String                   COMMENT 'the discovered id joined (ticker--venue), e.g. 1000pepe--binance-futures',
    target             LowCardinality(String)   COMMENT 'the asset it is now: a catalog id or another discovered id',
    venue              LowCardinality(String)   COMMENT 'the venue that lists the ticker',
    ticker             String                   COMMENT 'the ticker as the venue lists it',
    scale              Float64                  COMMENT 'units of the target per listed unit (1000 for 1000PEPE)',
    trades_moved       UInt64                   COMMENT 'trades moved from the alias to the target, over every run of the join',
    liquidations_moved UInt64                   COMMENT 'liquidations moved likewise',
    joined_at          DateTime64(3, 'UTC')     COMMENT 'when this row was written; the newest wins'
)
ENGINE = ReplacingMergeTree(joined_at)
ORDER BY alias
