// The demo's SIMULATED history, loaded as a user loads a venue's archives: the simulator writes
// its past trades as the venues' archive files under MDS_DATA_DIR (simulator/archiveFiles.ts, on a
// store that holds no trades yet), and they go through `npm run import`'s own functions (history/
// importRun.ts importFiles into the store this process holds, as history/directTarget.ts does for
// the CLI), with progress as plain log lines. Resumable by the importer's per-file state
// (import_files, by sha256): a start after one killed while importing completes the import, a
// later start finds every file imported and adds nothing. Runs before the sinks start, so nothing
// trusts what it last stored and the import takes trades up to now (liveHorizonMs 0).
import { basename, join } from 'node:path';
import { findArchiveSource } from '../../history/archives/registry.ts';
import { isRefusedKind } from '../../history/archives/source.ts';
import { storeTarget } from '../../history/directTarget.ts';
import type { FileJob } from '../../history/importFile.ts';
import { loadInsertedFiles, refusedTotal } from '../../history/importFiles.ts';
import { importFiles, type RunHooks, type RunSummary } from '../../history/importRun.ts';
import type { IndexSettings } from '../../history/indexSpan.ts';
import { fileLine, summaryLines } from '../../history/progress.ts';
import type { Logger } from '../log.ts';
import type { Store } from '../store.ts';

/** A complete set of archive files (simulator/archiveFiles.ts DemoArchives): `<dir>/<venue>/<name>`. */
export interface DemoArchiveSet {
  dir: string;
  files: readonly { venue: string; name: string }[];
  /** Trades in the set, and the times of its first and last (unix ms). */
  trades: number;
  from: number;
  to: number;
}

export interface DemoHistoryOptions {
  /** The store is chDB in this process (else a ClickHouse server): how the importer inserts. */
  embedded: boolean;
  /** The index engine's settings (indexSettingsFromConfig of the demo's configuration). */
  index: IndexSettings;
  log: Logger;
  /** The set written on an earlier start, if complete. */
  written(): DemoArchiveSet | undefined;
  /** Writes the set (called only on a store without trades and without a set). */
  write(): Promise<DemoArchiveSet>;
  /**
   * The index history is computed for this many hours before now, as the index runner backfills
   * (INDEX_BACKFILL_HOURS), not for the whole set: 45 sparse days of it took 36 s, and nothing of
   * the demo reads it (the 7 d and 30 d changes and ranges are read from candles).
   */
  indexHours: number;
  /** Trades per insert (the importer's default unless set: tests cut files into several). */
  chunkRows?: number;
}

/** The store does not hold exactly the set's trades after its import: the store needs a look, the demo does not start on it. */
export class DemoHistoryIncompleteError extends Error {
  override name = 'DemoHistoryIncompleteError';
}

/** A progress line at most this often (and for the first and last file). */
const progressEveryMs = 5_000;

/** The importer's job for a file of the set, as `npm run import -- --venue <venue> FILE` makes it from the file's name. */
function jobOf(set: DemoArchiveSet, file: { venue: string; name: string }): FileJob {
  const source = findArchiveSource(file.venue);
  const named = source?.parseName(file.name);
  const format = named && source!.kinds[named.kind];
  if (!source || !named || !format || isRefusedKind(format)) throw new DemoHistoryIncompleteError(`${file.venue}/${file.name}: not an archive file npm run import reads`);
  const path = join(set.dir, file.venue, file.name);
  return { path, name: basename(path), source, format, period: named.period, ...(named.market ? { market: named.market } : {}) };
}

/** The importer's hooks as plain log lines: a file every few seconds, failures, the index step. */
function progressHooks(log: Logger): RunHooks {
  let lastAt = -Infinity;
  return {
    onFileStart(job, position, of) {
      const now = performance.now();
      if (position !== 1 && position !== of && now - lastAt < progressEveryMs) return;
      lastAt = now;
      log.info(`importing SIMULATED demo history: file ${position}/${of} ${job.name}`);
    },
    onFileDone: (outcome) => void ('error' in outcome && log.error(fileLine(outcome))),
    onIndexStart: (span) => log.info(`importing SIMULATED demo history: computing the index history from ${new Date(span.from).toISOString()} ...`),
  };
}

/** Every trade of the set is in the store, once. */
async function verify(store: Store, set: DemoArchiveSet): Promise<void> {
  const [stored] = await store.rows<{ n: number; distinct: number }>(
    `SELECT count() AS n, uniqExact(venue, market, trade_id) AS distinct FROM trades
     WHERE venue IN {venues:Array(String)} AND ts BETWEEN fromUnixTimestamp64Milli({from:Int64}, 'UTC') AND fromUnixTimestamp64Milli({to:Int64}, 'UTC')`,
    { venues: [...new Set(set.files.map((f) => f.venue))], from: set.from, to: set.to },
  );
  if (stored?.n !== set.trades || stored.distinct !== set.trades)
    throw new DemoHistoryIncompleteError(`the SIMULATED demo history should hold ${set.trades} trades; the store holds ${stored?.n} (${stored?.distinct} distinct)`);
}

/**
 * Before the index step of an import cut short is done again: the rows that step wrote in the
 * set's span (and the volume window after it) are removed. Left there, the importer's runner would
 * take them for an earlier computation's and write every second of every asset up to the last of
 * them again (aggregate/indexSweep.ts, storedThrough): millions of rows over the history's weeks.
 * Nothing else wrote there: the demo imports its history before its sinks and index runner start.
 */
async function clearCutIndexStep(store: Store, set: DemoArchiveSet, index: IndexSettings, log: Logger): Promise<void> {
  if ((await loadInsertedFiles(store)).length === 0) return;
  const from = Math.floor(set.from / 1000);
  const to = Math.floor(set.to / 1000) + index.params.volumeWindowMinutes * 60;
  const [held] = await store.rows<{ n: number }>(
    "SELECT count() AS n FROM index_ticks WHERE second BETWEEN toDateTime({from:Int64}, 'UTC') AND toDateTime({to:Int64}, 'UTC')",
    { from, to },
  );
  if (!held?.n) return;
  log.warn({ rows: held.n }, 'the index step of the SIMULATED demo history was cut short: computing it again from the start');
  // Both copies of the rows: index_ticks and the one sorted by time that the current price reads.
  for (const table of ['index_ticks', 'index_ticks_by_time']) {
    await store.client.command({ query: "DELETE FROM {table:Identifier} WHERE second BETWEEN toDateTime({from:Int64}, 'UTC') AND toDateTime({to:Int64}, 'UTC')", query_params: { table, from, to } });
  }
  // Their summaries too: the step done again writes those of what it computes.
  await store.client.command({ query: "DELETE FROM index_summary_10m WHERE bucket BETWEEN toStartOfInterval(toDateTime({from:Int64}, 'UTC'), INTERVAL 10 MINUTE) AND toDateTime({to:Int64}, 'UTC')", query_params: { from, to } });
}

/**
 * Imports the demo's SIMULATED history (see the module comment). Returns the importer's summary,
 * undefined when the store holds trades and no set was ever written (left alone).
 */
export async function importDemoHistory(store: Store, options: DemoHistoryOptions): Promise<RunSummary | undefined> {
  const { log } = options;
  let set = options.written();
  const found = set !== undefined;
  if (!set) {
    const [held] = await store.rows<{ n: number }>('SELECT count() AS n FROM trades');
    if ((held?.n ?? 0) > 0) return undefined;
    set = await options.write();
    log.info({ files: set.files.length, trades: set.trades, dir: set.dir }, 'SIMULATED demo history written as the venues\' archive files');
  }
  const archives = set;
  if (found) await clearCutIndexStep(store, archives, options.index, log);
  const target = storeTarget(store, { embedded: options.embedded, index: options.index, log });
  let summary: RunSummary;
  try {
    const now = Date.now();
    const settings = { target, now, force: false, liveHorizonMs: 0, indexFrom: now - options.indexHours * 3_600_000, ...(options.chunkRows ? { chunkRows: options.chunkRows } : {}) };
    summary = await importFiles(archives.files.map((f) => jobOf(archives, f)), settings, progressHooks(log));
  } finally {
    await target.close();
  }
  const imported = summary.files.some((f) => f.state === 'imported') || summary.index.length > 0;
  if (summary.failed.length > 0 || refusedTotal(summary.counts) > 0) throw new DemoHistoryIncompleteError(summaryLines(summary, store.description).join('; '));
  if (!imported) {
    log.info({ dir: archives.dir }, 'SIMULATED demo history: every file imported on an earlier start');
    return summary;
  }
  for (const line of summaryLines(summary, store.description)) log.info(`SIMULATED demo history: ${line}`);
  // Files of the set read now, on a start that found the set written: a start before was cut short.
  if (found) log.warn({ dir: archives.dir }, 'an import of the SIMULATED demo history was cut short: completed now');
  await verify(store, archives);
  return summary;
}
