-- The chains the DEX indexer (aggregate/jobs/chains/evmIndexer.ts) works on, written at each of its runs
-- from CHAINS_CONFIG: /v1/chains has one row per chain here. The newest row of a chain wins
-- (read with FINAL or argMax); a chain dropped from the configuration stays until deleted.
CREATE TABLE IF NOT EXISTS chain_registry
(
    chain      LowCardinality(String) COMMENT 'our chain id, e.g. ethereum',
    name       String                 COMMENT 'display name, e.g. Ethereum; a simulated chain says so here',
    updated_at DateTime64(3, 'UTC')   COMMENT 'start of the indexer run that wrote the row'
)
ENGINE = ReplacingMergeTree(updated_at)
ORDER BY chain
