-- Progress of the pool backfill of each factory: its PairCreated / PoolCreated logs from its
-- deployment block (CHAINS_CONFIG fromBlock) up to, excluding, end_block, where the main indexing
-- pass (pools and swaps) starts. The newest row (highest next_block) wins: read with FINAL.
CREATE TABLE IF NOT EXISTS chain_factory_scans
(
    chain      LowCardinality(String) COMMENT 'our chain id',
    factory    String                 COMMENT 'factory contract address, lowercase hex',
    next_block UInt64                 COMMENT 'first block not yet scanned',
    end_block  UInt64                 COMMENT 'the backfill is done when next_block reaches it'
)
ENGINE = ReplacingMergeTree(next_block)
ORDER BY (chain, factory)
