-- The base asset's full name as the venue lists the market (Coinbase's and Gate's `base_name`,
-- KuCoin's and Bitfinex's currency names),
-- carried by the collectors' statuses (ingest/EVENTS.md, `status`): what a discovered asset is
-- called (infra/catalog/assetUniverse.ts). Empty where the venue's listing gives no name, and in rows
-- written before it existed.
ALTER TABLE market_connections
    ADD COLUMN IF NOT EXISTS base_name String DEFAULT '' COMMENT 'the base asset''s full name in the venue''s listing, e.g. Bitcoin; empty = the venue gives none'
