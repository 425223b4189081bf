-- The genesis block hash of each indexed chain: the identity of the chain its stored history belongs
-- to. A node whose genesis differs serves another chain under the same id (a reset devnet, the demo's
-- simulated chain after a restart, a wrong endpoint): the indexer then stops or reindexes, as the
-- chain's `onChainReset` says (aggregate/jobs/chains/evmIndexer.ts). Empty in rows written before it existed.
ALTER TABLE chain_registry
    ADD COLUMN IF NOT EXISTS genesis_hash String DEFAULT '' COMMENT 'hash of block 0 of the chain whose history is stored, lowercase hex; empty = not recorded yet'
