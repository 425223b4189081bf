-- Which migration files have been applied, by file name. Written by infra/migrate.ts.
CREATE TABLE IF NOT EXISTS schema_migrations
(
    name       String               COMMENT 'migration file name',
    applied_at DateTime64(3, 'UTC') COMMENT 'when it was applied'
)
ENGINE = MergeTree
ORDER BY name
