-- The base token's contracts as the venue lists the market (KuCoin's currency chains mapped to
-- CoinGecko platform ids, ingest/venues/kucoin.ts), carried by the collectors' statuses
-- (ingest/EVENTS.md, `status`): a discovered asset's `platforms` (infra/catalog/assetUniverse.ts).
-- Empty where the venue's listing gives none, and in rows written before it existed.
ALTER TABLE market_connections
    ADD COLUMN IF NOT EXISTS base_contracts Map(String, String) COMMENT 'the base token''s contract on each platform in the venue''s listing, platform id -> address (EVM addresses in lower case), e.g. {''ethereum'':''0xdac1...''}; empty = the venue gives none'
