-- Every pool created by an indexed factory (PairCreated / PoolCreated logs): the registry behind
-- poolsIndexed and tokensIndexed of /v1/chains. One row per (chain, pool); rows of blocks that a
-- reorg orphaned are deleted by the indexer.
CREATE TABLE IF NOT EXISTS chain_pools
(
    chain             LowCardinality(String) COMMENT 'our chain id',
    dex               LowCardinality(String) COMMENT 'DEX deployment of the factory, from CHAINS_CONFIG, e.g. uniswap-v3',
    kind              Enum8('v2' = 2, 'v3' = 3) COMMENT 'event layout: v2 = PairCreated + Swap(in/out), v3 = PoolCreated + Swap(signed deltas)',
    factory           String  COMMENT 'factory contract address, lowercase hex',
    pool              String  COMMENT 'pool (pair) contract address, lowercase hex',
    token0            String  COMMENT 'token0 contract address (the lower address), lowercase hex',
    token1            String  COMMENT 'token1 contract address, lowercase hex',
    fee               Nullable(UInt32) COMMENT 'v3 fee tier in hundredths of a bip (500 = 0.05 %); null for v2',
    created_block     UInt64  COMMENT 'block of the creation log',
    created_tx        String  COMMENT 'transaction hash of the creation log',
    created_log_index UInt32  COMMENT 'log index of the creation log in its block'
)
ENGINE = ReplacingMergeTree
ORDER BY (chain, pool)
