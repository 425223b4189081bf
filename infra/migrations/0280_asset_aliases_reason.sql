-- Why an alias was joined into its target: `identities-file`, the operator's mapping
-- (aggregate/jobs/identityJoins.ts), or `delisted`, a discovered asset whose markets all left its
-- venue's listing, its history kept under a retired id (aggregate/jobs/delistedRetirements.ts). A
-- `delisted` alias names the asset it was only until the venue lists the ticker again: then the
-- id is the new listing's. Rows written before it existed were the operator's.
ALTER TABLE asset_aliases
    ADD COLUMN IF NOT EXISTS reason LowCardinality(String) DEFAULT 'identities-file' COMMENT 'identities-file: the operator mapped the ticker; delisted: its markets left the venue''s listing and its history was retired under target'
