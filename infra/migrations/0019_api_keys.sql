-- API keys, stored hashed (sha256 of the whole key here; a keyed hash since 0170, whose scheme
-- column tells them apart); the key itself is shown once, at creation.
-- A revocation is a newer version of the row; read with FINAL.
CREATE TABLE IF NOT EXISTS api_keys
(
    key_hash   FixedString(64)                COMMENT 'hex sha256 of the key',
    prefix     String                         COMMENT 'first characters of the key, for listing',
    name       String                         COMMENT 'label given at creation',
    created_at DateTime64(3, 'UTC'),
    revoked_at Nullable(DateTime64(3, 'UTC')) COMMENT 'null while the key is valid',
    version    UInt64                         COMMENT 'higher wins'
)
ENGINE = ReplacingMergeTree(version)
ORDER BY key_hash
