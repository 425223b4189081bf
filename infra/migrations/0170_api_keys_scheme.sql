-- How each api_keys row's key_hash was made: rows written before this migration are the unkeyed
-- sha256 of the key (the default marks them), which a copy of the table lets anyone test guesses
-- against; they are refused (api/keys.ts). New rows are HMAC-SHA256 under the server secret
-- (API_KEY_SECRET or <MDS_DATA_DIR>/api-key-secret), which is not in the store.
ALTER TABLE api_keys
    ADD COLUMN IF NOT EXISTS scheme LowCardinality(String) DEFAULT 'sha256' COMMENT 'how key_hash was made: hmac-sha256 (server secret) or sha256 (older versions, refused)' AFTER key_hash,
    COMMENT COLUMN key_hash 'hex digest of the key, as scheme says; never the key'
