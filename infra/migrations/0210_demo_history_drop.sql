-- The demo no longer seeds its SIMULATED history with an insert of its own (0160): it writes the
-- venues' archive files and imports them with `npm run import`'s code, whose import_files (0200)
-- makes the import resumable. Nothing reads demo_history any more.
DROP TABLE IF EXISTS demo_history
