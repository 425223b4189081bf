-- Every Swap log of an indexed pool, one row per (chain, block, log index), with its raw token
-- amounts and the USD value of one leg (aggregate/jobs/chains/swapValuation.ts). The indexer stores a
-- range only after dropping the rows already held, so re-indexing a range adds nothing; rows of
-- blocks that a reorg orphaned are deleted before their range is indexed again.
CREATE TABLE IF NOT EXISTS chain_swaps
(
    chain      LowCardinality(String) COMMENT 'our chain id',
    block      UInt64                 COMMENT 'block number',
    ts         DateTime('UTC')        COMMENT 'block timestamp' CODEC(Delta, ZSTD(1)),
    tx         String                 COMMENT 'transaction hash' CODEC(ZSTD(1)),
    log_index  UInt32                 COMMENT 'log index in the block',
    dex        LowCardinality(String) COMMENT 'DEX deployment of the pool''s factory',
    pool       String                 COMMENT 'pool contract address, lowercase hex' CODEC(ZSTD(1)),
    amount0_in  UInt256 COMMENT 'token0 paid into the pool, raw integer units' CODEC(ZSTD(1)),
    amount1_in  UInt256 COMMENT 'token1 paid into the pool, raw integer units' CODEC(ZSTD(1)),
    amount0_out UInt256 COMMENT 'token0 taken out of the pool, raw integer units' CODEC(ZSTD(1)),
    amount1_out UInt256 COMMENT 'token1 taken out of the pool, raw integer units' CODEC(ZSTD(1)),
    usd        Nullable(Float64)      COMMENT 'USD value of the valued leg; null = neither leg could be valued (still counted as a swap)',
    usd_token  String                 COMMENT 'address of the token whose leg was valued; empty when unvalued',
    usd_by     LowCardinality(String) COMMENT 'par:<asset> (stablecoin at 1 USD) or index:<asset> (our index price at the block time); empty when unvalued'
)
ENGINE = ReplacingMergeTree
PARTITION BY toYYYYMM(ts)
ORDER BY (chain, block, log_index)
