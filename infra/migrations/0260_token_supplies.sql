-- ERC-20 metadata read from a configured chain (CHAINS_CONFIG) for the contracts the venues' listings
-- give discovered assets (market_connections.base_contracts), by the job `token-supplies`
-- (aggregate/jobs/chains/tokenSupplies.ts): name(), symbol(), decimals() and totalSupply() by
-- eth_call. A discovered asset's total supply and its platform's decimals are served from the latest
-- row of its contract when it was read (error empty); a row with an error leaves them unknown. The
-- newest row of a contract wins: read with FINAL.
CREATE TABLE IF NOT EXISTS token_supplies
(
    platform     LowCardinality(String) COMMENT 'CoinGecko platform id of the chain (CHAINS_CONFIG platform), e.g. ethereum',
    address      String                 COMMENT 'the token contract, lowercase hex',
    chain        LowCardinality(String) COMMENT 'our chain id (CHAINS_CONFIG id) whose node was asked',
    name         String                 COMMENT 'name() as the contract answers it; empty when it gives none readable',
    symbol       String                 COMMENT 'symbol() likewise',
    decimals     UInt8                  COMMENT 'decimals(); 0 when error is set',
    total_supply String                 COMMENT 'totalSupply() in the token''s base units, a decimal integer (uint256 does not fit a Float64); empty when error is set',
    error        String                 COMMENT 'why the contract could not be read (a revert, no contract there, an answer that is not ERC-20); empty = read',
    checked_at   DateTime64(3, 'UTC')   COMMENT 'when the node was asked; the newest row wins'
)
ENGINE = ReplacingMergeTree(checked_at)
ORDER BY (platform, address)
