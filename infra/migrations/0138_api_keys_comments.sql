-- Comment on the api_keys column that was created without one (infra/SCHEMA.md shows it).
ALTER TABLE api_keys
    COMMENT COLUMN created_at 'when the key was created'
