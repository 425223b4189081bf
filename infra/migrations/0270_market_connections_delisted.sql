-- Whether the market left the venue's listing (ingest/EVENTS.md, `status`, `delisted`): written by a
-- native collector's re-listing when the market is gone, with connected = false. A discovered asset
-- whose markets' latest statuses all say so for a day is retired under an id of its own
-- (aggregate/jobs/delistedRetirements.ts). False in rows written before it existed.
ALTER TABLE market_connections
    ADD COLUMN IF NOT EXISTS delisted Bool DEFAULT false COMMENT 'true: the market left the venue''s listing and is no longer collected (connected is then false)'
