// The `import_files` table (infra/migrations/0200_import_files.sql): what each archive file's
// import has done, read before the file is and written after each chunk.
import type { StoreCalls } from '../infra/store.ts';

export type ImportState = 'reading' | 'inserted' | 'complete';

/** Rows of a file, by outcome; refused ones per reason. */
export interface RowCounts {
  read: number;
  new: number;
  held: number;
  refused: Map<string, number>;
}

export const noRows = (): RowCounts => ({ read: 0, new: 0, held: 0, refused: new Map() });

export const refusedTotal = (c: RowCounts) => [...c.refused.values()].reduce((a, b) => a + b, 0);

export function addRows(into: RowCounts, from: RowCounts): void {
  into.read += from.read;
  into.new += from.new;
  into.held += from.held;
  for (const [reason, n] of from.refused) into.refused.set(reason, (into.refused.get(reason) ?? 0) + n);
}

/** A trade-time span in unix ms. */
export interface Span {
  from: number;
  to: number;
}

export interface ImportFileRecord {
  sha256: string;
  name: string;
  venue: string;
  kind: string;
  state: ImportState;
  chunkRows: number;
  chunksDone: number;
  counts: RowCounts;
  /** The trades stored from the file. */
  stored?: Span;
  /** Where the store held the market when the file was first read (kinds whose ids are not the collector's). */
  covered?: Span;
}

interface StoredRecord {
  sha256: string;
  name: string;
  venue: string;
  kind: string;
  state: ImportState;
  chunk_rows: number;
  chunks_done: number;
  rows_read: number;
  rows_new: number;
  rows_held: number;
  refusals: Record<string, number>;
  first_ts: number | null;
  last_ts: number | null;
  covered_from: number | null;
  covered_to: number | null;
}

const spanOf = (from: number | null, to: number | null): Span | undefined => (from === null || to === null ? undefined : { from, to });

const columns = `sha256, name, venue, kind, state, chunk_rows, chunks_done, rows_read, rows_new, rows_held, refusals,
  toUnixTimestamp64Milli(first_ts) AS first_ts, toUnixTimestamp64Milli(last_ts) AS last_ts,
  toUnixTimestamp64Milli(covered_from) AS covered_from, toUnixTimestamp64Milli(covered_to) AS covered_to`;

function recordOf(r: StoredRecord): ImportFileRecord {
  return {
    sha256: r.sha256,
    name: r.name,
    venue: r.venue,
    kind: r.kind,
    state: r.state,
    chunkRows: r.chunk_rows,
    chunksDone: r.chunks_done,
    counts: { read: r.rows_read, new: r.rows_new, held: r.rows_held, refused: new Map(Object.entries(r.refusals)) },
    stored: spanOf(r.first_ts, r.last_ts),
    covered: spanOf(r.covered_from, r.covered_to),
  };
}

/** The newest record of the file with this sha256, if it was ever read. */
export async function loadImportFile(store: StoreCalls, sha256: string): Promise<ImportFileRecord | undefined> {
  const [row] = await store.rows<StoredRecord>(`SELECT ${columns} FROM import_files FINAL WHERE sha256 = {sha256:String}`, { sha256 });
  return row && recordOf(row);
}

/** Files every chunk of which is stored and whose span's index is not computed yet (a run cut short after its inserts), by name: FINAL returns its parts in no set order. */
export async function loadInsertedFiles(store: StoreCalls): Promise<ImportFileRecord[]> {
  const rows = await store.rows<StoredRecord>(`SELECT ${columns} FROM import_files FINAL WHERE state = 'inserted' ORDER BY name, sha256`);
  return rows.map(recordOf);
}

let lastWrittenAt = 0;

/** Writes the file's record; each write is newer than the last (the newest wins). */
export async function saveImportFile(store: StoreCalls, record: ImportFileRecord): Promise<void> {
  await saveImportFiles(store, [record]);
}

/** Writes the files' records in one insert (one round trip, not one per file), each newer than any written before. */
export async function saveImportFiles(store: StoreCalls, records: readonly ImportFileRecord[]): Promise<void> {
  if (records.length > 0) await store.insert('import_files', records.map(storedRow));
}

function storedRow(record: ImportFileRecord) {
  lastWrittenAt = Math.max(Date.now(), lastWrittenAt + 1);
  const { counts } = record;
  return {
    sha256: record.sha256,
    name: record.name,
    venue: record.venue,
    kind: record.kind,
    state: record.state,
    chunk_rows: record.chunkRows,
    chunks_done: record.chunksDone,
    rows_read: counts.read,
    rows_new: counts.new,
    rows_held: counts.held,
    rows_refused: refusedTotal(counts),
    refusals: Object.fromEntries(counts.refused),
    first_ts: record.stored?.from ?? null,
    last_ts: record.stored?.to ?? null,
    covered_from: record.covered?.from ?? null,
    covered_to: record.covered?.to ?? null,
    updated_at: lastWrittenAt,
  };
}
