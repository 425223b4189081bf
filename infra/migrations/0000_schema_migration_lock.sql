-- The migration lock (infra/migrationLock.ts): one generation per attempt to take it. Every attempt
-- at generation N inserts with the same deduplication token, so the engine keeps exactly one row of
-- it: the owner of that row holds the lock until its expiry, which it renews while it migrates and
-- sets to the release time when done. Created before any migration runs, like schema_migrations.
CREATE TABLE IF NOT EXISTS schema_migration_lock
(
    generation UInt64 COMMENT 'attempt number: one more than the newest when the attempt began',
    owner      String COMMENT 'the process that holds this generation: host, process id and a random part',
    expires_ms UInt64 COMMENT 'the lock is free after this, unix milliseconds of the owner''s clock',
    version    UInt64 COMMENT 'renewals and the release replace the row; the highest version counts'
)
ENGINE = ReplacingMergeTree(version)
ORDER BY generation
SETTINGS non_replicated_deduplication_window = 1000
