-- Each archive file `npm run import` has read (history/), by its sha256: how far it got, so that an
-- import cut short resumes at its next chunk (a chunk's insert_deduplication_token is the file's
-- sha256 and the chunk's index, so a chunk inserted just before a crash is dropped when sent
-- again), and a file imported whole is not read again. The newest row of a file wins: read with FINAL.
CREATE TABLE IF NOT EXISTS import_files
(
    sha256        String                    COMMENT 'sha256 of the file as read (the .zip or .csv.gz as published)',
    name          String                    COMMENT 'the file''s name',
    venue         LowCardinality(String)    COMMENT 'venue id, e.g. binance',
    kind          LowCardinality(String)    COMMENT 'the archive kind, as the venue names it: trades, aggTrades',
    state         Enum8('reading' = 1, 'inserted' = 2, 'complete' = 3)
                                            COMMENT 'reading: chunks being inserted; inserted: every chunk is, the index of its span not yet computed; complete: both',
    chunk_rows    UInt32                    COMMENT 'data lines per chunk: a resumed import cuts the same chunks',
    chunks_done   UInt32                    COMMENT 'chunks inserted: a resumed import starts at the next one',
    rows_read     UInt64                    COMMENT 'data lines read in the chunks done',
    rows_new      UInt64                    COMMENT 'trades stored',
    rows_held     UInt64                    COMMENT 'trades the store already held (same venue, market, trade id)',
    rows_refused  UInt64                    COMMENT 'rows not stored, for the reasons in refusals',
    refusals      Map(String, UInt64)       COMMENT 'rows refused per reason',
    first_ts      Nullable(DateTime64(3, 'UTC')) COMMENT 'earliest trade stored from the file',
    last_ts       Nullable(DateTime64(3, 'UTC')) COMMENT 'latest trade stored from the file',
    covered_from  Nullable(DateTime64(3, 'UTC')) COMMENT 'for kinds whose ids are not the collector''s: the first trade the store held of the market in the file''s span when the file was first read (rows from here to covered_to are refused)',
    covered_to    Nullable(DateTime64(3, 'UTC')) COMMENT 'the last such trade',
    updated_at    DateTime64(3, 'UTC')      COMMENT 'when this row was written; the newest wins'
)
ENGINE = ReplacingMergeTree(updated_at)
ORDER BY sha256
