-- Blocks the DEX indexer has read, with their hashes: every block holding an indexed log, the
-- last block of every indexed range and the first block of the indexed history. The highest
-- number of a chain is where the indexer resumes; its hash, compared with the node's, detects a
-- reorg, and the stored hashes below it find the fork point. The lowest timestamp is where the
-- indexed history starts (volumeChange needs a fully covered previous window).
CREATE TABLE IF NOT EXISTS chain_blocks
(
    chain       LowCardinality(String) COMMENT 'our chain id',
    number      UInt64                 COMMENT 'block number',
    hash        String                 COMMENT 'block hash, lowercase hex',
    parent_hash String                 COMMENT 'parent block hash, lowercase hex',
    ts          DateTime('UTC')        COMMENT 'block timestamp'
)
ENGINE = ReplacingMergeTree
ORDER BY (chain, number)
