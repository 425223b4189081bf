// The demo's SIMULATED history on a store, as `npm run demo` loads it (infra/roles/demoHistory.ts):
// the simulator's archive files (simulator/archiveFiles.ts) imported with `npm run import`'s code.
// Only on a store without trades, once; a start killed while importing is completed at the next
// with the first start's files (every trade once, candles counted once); a later start adds
// nothing; a store whose trades no longer match the files is refused. (Moved from
// simulator/__tests__/history.store.test.ts, which tested the direct seeding this replaced.)
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { openTestStore } from '../../test/support/harness.ts';
import { defaultIndexParams } from '../../aggregate/indexPrice.ts';
import { defaultIndexSchedule } from '../../aggregate/indexRunner.ts';
import { loadImportFile, saveImportFile } from '../../history/importFiles.ts';
import { fileSha256 } from '../../history/archiveFile.ts';
import { archivePath, readDemoArchives, writeDemoArchives, type DemoArchives } from '../../simulator/archiveFiles.ts';
import { planDemoHistory } from '../../simulator/history.ts';
import type { Logger } from '../log.ts';
import type { Store } from '../store.ts';
import { DemoHistoryIncompleteError, importDemoHistory } from '../roles/demoHistory.ts';

let env: Awaited<ReturnType<typeof openTestStore>>;
const dirs: string[] = [];
beforeAll(async () => (env = await openTestStore()));
afterAll(async () => {
  await env?.dispose();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

const hourMs = 3_600_000;
/**
 * The 10th of the month `n` months ago, noon UTC: in the past, a few days of history before it stay
 * in one month. Each test's history comes after the one before (as a fresh demo store's, its index
 * is computed after any stored), apart from the others' by more than the index's volume window.
 */
const monthsAgo = (n: number) => {
  const d = new Date();
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() - n, 10, 12);
};
/** The first live trade id of every market, as the simulator would print it. */
const firstLiveId = () => 1_500_000;

interface PerMarket {
  asset: string;
  venue: string;
  n: number;
  ids: number;
  first: number;
  last: number;
  lastPrice: number;
}

/** Per asset and venue in [from, to): trades, distinct trade ids, first and last time, last price (rows as stored, no FINAL). */
async function perMarket(from: number, to: number): Promise<PerMarket[]> {
  return env.store.rows<PerMarket>(
    `SELECT asset, venue, count() AS n, uniqExact(trade_id) AS ids, toUnixTimestamp64Milli(min(ts)) AS first, toUnixTimestamp64Milli(max(ts)) AS last,
            argMax(price, ts) AS lastPrice
     FROM trades WHERE ts >= fromUnixTimestamp64Milli({from:Int64}, 'UTC') AND ts < fromUnixTimestamp64Milli({to:Int64}, 'UTC')
     GROUP BY asset, venue ORDER BY asset, venue`,
    { from, to },
  );
}

/** What a complete history of `hours` hourly steps ending at `now` holds per asset and venue. */
const complete = (prices: Record<string, number>, now: number, hours: number) =>
  Object.entries(prices).flatMap(([asset, lastPrice]) =>
    ['binance', 'gate'].map((venue) => ({ asset, venue, n: hours, ids: hours, first: now - hours * hourMs, last: now - hourMs, lastPrice })),
  );

function capturingLog() {
  const lines: { level: number; msg: string }[] = [];
  const log = pino({ level: 'info' }, new Writable({ write: (chunk, _enc, done) => (lines.push(JSON.parse(String(chunk))), done()) }));
  return { log: log as unknown as Logger, lines };
}

interface Start {
  seed: number;
  now: number;
  prices: Record<string, number>;
  days: number;
  log?: Logger;
  chunkRows?: number;
  /** The index history's hours before the wall clock (default: all of a history months ago). */
  indexHours?: number;
}

/** One demo start's history step on `dir`, as infra/roles/demo.ts wires it (its seed, time and prices are used only if it writes). */
function start(store: Store, dir: string, s: Start, onWrite?: () => void) {
  const silent = capturingLog().log;
  return importDemoHistory(store, {
    embedded: true,
    index: { params: defaultIndexParams, schedule: { ...defaultIndexSchedule, maxSecondsPerTick: 26 * 3_600 } },
    indexHours: s.indexHours ?? 24 * 366,
    log: s.log ?? silent,
    written: () => readDemoArchives(dir),
    write: () => {
      onWrite?.();
      const tickers = Object.keys(s.prices);
      return writeDemoArchives(dir, planDemoHistory({ days: s.days, stepMs: hourMs, now: s.now, seed: s.seed, tickers, priceOf: (t) => s.prices[t]! }), firstLiveId);
    },
    ...(s.chunkRows ? { chunkRows: s.chunkRows } : {}),
  });
}

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'mds-demo-history-'));
  dirs.push(dir);
  return dir;
}

/** Each file's import record as the importer left it (the newest of its rows). */
const importRecords = (archives: DemoArchives) =>
  Promise.all(
    archives.files.map(async (f) => {
      const record = (await loadImportFile(env.store, await fileSha256(archivePath(archives, f))))!;
      return { name: record.name, state: record.state, read: record.counts.read, new: record.counts.new };
    }),
  );

/**
 * The store of a process killed right after the store took the `nth` call that `counts` (the
 * query of a command, or `insert:<table>`), before the caller learned it did: every call after fails.
 */
function dyingAfter(counts: (call: string) => boolean, nth: number): Store {
  let calls = 0;
  let dead = false;
  const deadCheck = () => {
    if (dead) throw new Error('SIGKILL');
  };
  const took = (call: string) => {
    if (counts(call) && ++calls === nth) dead = true;
    deadCheck();
  };
  const client = new Proxy(env.store.client, {
    get(target, prop) {
      if (prop !== 'command') return Reflect.get(target, prop, target) as unknown;
      return async (params: Parameters<typeof target.command>[0]) => {
        deadCheck();
        const result = await target.command(params);
        took(params.query);
        return result;
      };
    },
  });
  return {
    ...env.store,
    client,
    rows: async (query, params) => (deadCheck(), env.store.rows(query, params)),
    async insert(table, rows, token) {
      deadCheck();
      await env.store.insert(table, rows, token);
      took(`insert:${table}`);
    },
  };
}

test('demo history: two markets per asset every step, ending at the model price, only on an empty store, once', async () => {
  const dir = tempDir();
  const now = monthsAgo(4);
  const first = { seed: 7, now, days: 2, prices: { BTC: 90_000, ETH: 3_000 } };
  const summary = await start(env.store, dir, first);
  expect(summary?.counts).toMatchObject({ read: 2 * 2 * 48, new: 2 * 2 * 48, held: 0 });
  expect(await perMarket(0, now)).toEqual(complete({ bitcoin: 90_000, ethereum: 3_000 }, now, 48));
  // The importer computed the index history of the imported span.
  const [index] = await env.store.rows<{ from: number }>("SELECT toUnixTimestamp64Milli(min(last_trade_at)) AS from FROM index_price_history WHERE asset = 'bitcoin'");
  expect(index?.from).toBe(now - 48 * hourMs);
  // A restarted demo keeps its data: nothing is added, nothing is written again.
  let wroteAgain = false;
  const later = await start(env.store, dir, { ...first, seed: 8, now: now + hourMs }, () => (wroteAgain = true));
  expect(wroteAgain).toBe(false);
  expect(later?.counts).toMatchObject({ read: 0, new: 0 });
  expect(later?.files.map((f) => f.state)).toEqual(later?.files.map(() => 'already imported'));
  expect(await perMarket(0, now + hourMs)).toEqual(complete({ bitcoin: 90_000, ethereum: 3_000 }, now, 48));
  // Each file's import is recorded complete, every row of it new.
  const archives = readDemoArchives(dir)!;
  expect(archives.files).toHaveLength(4);
  expect(await importRecords(archives)).toEqual(archives.files.map((f) => ({ name: f.name, state: 'complete', read: 48, new: 48 })));
});

test('an import killed after some inserts is completed at the next start with the first start\'s files: every trade once, candles counted once', async () => {
  for (const table of ['trades', 'import_files', 'candles_1m']) await env.store.client.command({ query: `TRUNCATE TABLE ${table}` });
  const dir = tempDir();
  const now = monthsAgo(3);
  const prices = { BTC: 80_000, ETH: 2_500, SOL: 140 };
  const options = { seed: 21, now, days: 5, prices, chunkRows: 40 };
  // 3 assets x 2 venues, 120 trades each in one file, inserted 40 at a time.
  const total = 3 * 2 * 120;

  // The process dies right after the store took the 4th insert of trades, before the importer learned it did: nothing reaches the store after.
  const dying = dyingAfter((call) => call.startsWith('INSERT INTO trades'), 4);
  await expect(start(dying, dir, options)).rejects.toThrow('SIGKILL');
  const [partial] = await env.store.rows<{ n: number }>('SELECT count() AS n FROM trades');
  expect(partial?.n).toBe(4 * 40);

  // The next start passes a new seed, time and prices (as infra/roles/demo.ts does): the first start's files win.
  const { log, lines } = capturingLog();
  const restart = { ...options, seed: 22, now: now + 5 * hourMs, prices: { BTC: 1, ETH: 1, SOL: 1 }, log };
  const completed = await start(env.store, dir, restart);
  // The first file was whole (skipped), the second resumes at its first chunk (held), the others are new.
  expect(completed?.counts).toMatchObject({ read: total - 120, new: total - 160, held: 40 });
  const expected = complete({ bitcoin: 80_000, ethereum: 2_500, solana: 140 }, now, 120);
  expect(await perMarket(0, Date.parse('2030-01-01T00:00:00Z'))).toEqual(expected);
  const [counted] = await env.store.rows<{ n: number }>('SELECT sum(trade_count) AS n FROM candles_1m');
  expect(counted?.n).toBe(total);
  // Progress as plain log lines: the first file and the last, the importer's summary, and a warning that a start was cut short.
  const messages = lines.map((l) => l.msg);
  const progress = messages.filter((m) => m.startsWith('importing SIMULATED demo history: file'));
  expect(progress[0]).toMatch(/^importing SIMULATED demo history: file 1\/6 /);
  expect(progress.at(-1)).toMatch(/^importing SIMULATED demo history: file 6\/6 /);
  expect(messages).toContain(`SIMULATED demo history: rows read ${total - 120}: new ${total - 160}, already held 40, refused 0`);
  expect(lines.filter((l) => l.level === 40).map((l) => l.msg)).toEqual(['an import of the SIMULATED demo history was cut short: completed now']);

  // Complete now: later starts add nothing.
  expect((await start(env.store, dir, restart))?.counts).toMatchObject({ read: 0, new: 0 });
  expect(await perMarket(0, Date.parse('2030-01-01T00:00:00Z'))).toEqual(expected);
});

test('an import killed right after a chunk\'s progress was recorded resumes at the next chunk: that file is not taken as inserted whole', async () => {
  for (const table of ['trades', 'import_files', 'candles_1m']) await env.store.client.command({ query: `TRUNCATE TABLE ${table}` });
  const dir = tempDir();
  // After the test before's history (and its index's volume window), before the next one's.
  const now = monthsAgo(3) + 12 * 24 * hourMs;
  const options = { seed: 25, now, days: 5, prices: { BTC: 81_000 }, chunkRows: 40 };
  // 2 files of 120 trades, 40 a chunk. The first file's ledger writes: reading, then its first chunk done (the 2nd write).
  const dying = dyingAfter((call) => call === 'insert:import_files', 2);
  await expect(start(dying, dir, options)).rejects.toThrow('SIGKILL');
  const archives = readDemoArchives(dir)!;
  const first = (await loadImportFile(env.store, await fileSha256(archivePath(archives, archives.files[0]!))))!;
  expect(first).toMatchObject({ state: 'reading', chunksDone: 1, counts: { read: 40, new: 40 } });

  const completed = await start(env.store, dir, { ...options, seed: 26 });
  expect(completed?.counts).toMatchObject({ read: 240 - 40, new: 240 - 40, held: 0 });
  expect(await perMarket(0, Date.parse('2030-01-01T00:00:00Z'))).toEqual(complete({ bitcoin: 81_000 }, now, 120));
  const [counted] = await env.store.rows<{ n: number }>('SELECT sum(trade_count) AS n FROM candles_1m');
  expect(counted?.n).toBe(240);
  expect((await importRecords(archives)).map((r) => r.state)).toEqual(['complete', 'complete']);
});

test('a store with trades and no demo archives is left alone; one whose trades no longer match its archives is refused', async () => {
  await env.store.client.command({ query: 'TRUNCATE TABLE import_files' });
  const options = { seed: 31, now: monthsAgo(2), days: 1, prices: { BTC: 90_000 } };
  let wrote = false;
  expect(await start(env.store, tempDir(), options, () => (wrote = true))).toBeUndefined();
  expect(wrote).toBe(false);
  expect(await env.store.rows('SELECT * FROM import_files')).toEqual([]);

  // Archives imported whole, then a trade deleted by hand and its file's import marked as cut short.
  await env.store.client.command({ query: 'TRUNCATE TABLE trades' });
  const dir = tempDir();
  expect((await start(env.store, dir, options))?.counts.new).toBe(24 * 2);
  const archives = readDemoArchives(dir)!;
  const file = archives.files.find((f) => f.venue === 'binance')!;
  const record = (await loadImportFile(env.store, await fileSha256(archivePath(archives, file))))!;
  await saveImportFile(env.store, { ...record, state: 'reading', chunksDone: 0 });
  await env.store.client.command({ query: `DELETE FROM trades WHERE venue = 'binance' AND trade_id = '${1_500_000 - 24 + 3}'` });
  await expect(start(env.store, dir, options)).rejects.toThrow(DemoHistoryIncompleteError);
});

test('an import killed in its index step is completed at the next start: the index computed again from the start, as sparse as the first time', async () => {
  for (const table of ['trades', 'import_files']) await env.store.client.command({ query: `TRUNCATE TABLE ${table}` });
  const dir = tempDir();
  const now = monthsAgo(1);
  const options = { seed: 41, now, days: 3, prices: { BTC: 85_000, ETH: 2_800 } };
  const total = 2 * 2 * 72;
  // Killed right after the first step of the index history was stored.
  await expect(start(dyingAfter((call) => call === 'insert:index_ticks', 1), dir, options)).rejects.toThrow('SIGKILL');
  const [cut] = await env.store.rows<{ n: number }>("SELECT count() AS n FROM index_ticks WHERE asset = 'bitcoin' AND second >= toDateTime({from:Int64}, 'UTC')", { from: (now - 72 * hourMs) / 1000 });
  expect(cut?.n).toBeGreaterThan(0);

  const { log, lines } = capturingLog();
  const completed = await start(env.store, dir, { ...options, seed: 42, log });
  expect(completed?.counts).toMatchObject({ read: 0, new: 0 });
  expect(completed?.index).toHaveLength(1);
  expect(lines.filter((l) => l.level === 40).map((l) => l.msg)).toEqual([
    'the index step of the SIMULATED demo history was cut short: computing it again from the start',
    'an import of the SIMULATED demo history was cut short: completed now',
  ]);
  expect(await perMarket(now - 72 * hourMs, now)).toEqual(complete({ bitcoin: 85_000, ethereum: 2_800 }, now, 72));
  // A row where a constituent traded or the index changed, as on a first computation: a few per trade, not one per second.
  const [rows] = await env.store.rows<{ n: number; first: number }>(
    "SELECT count() AS n, toUnixTimestamp64Milli(min(last_trade_at)) AS first FROM index_ticks WHERE second >= toDateTime({from:Int64}, 'UTC')",
    { from: (now - 72 * hourMs) / 1000 },
  );
  expect(rows?.first).toBe(now - 72 * hourMs);
  expect(rows?.n).toBeLessThan(3 * total);
  // The copy sorted by time lost the cut step's rows with index_ticks: it holds the same rows, not those twice.
  const [copied] = await env.store.rows<{ n: number }>("SELECT count() AS n FROM index_ticks_by_time WHERE second >= toDateTime({from:Int64}, 'UTC')", { from: (now - 72 * hourMs) / 1000 });
  expect(copied?.n).toBe(rows?.n);
});

test('a history ending now is imported whole: the demo imports before its sinks start, so no trade is left to them as too recent; its index only for the last hours asked', async () => {
  for (const table of ['trades', 'import_files']) await env.store.client.command({ query: `TRUNCATE TABLE ${table}` });
  const now = Date.now();
  const summary = await start(env.store, tempDir(), { seed: 51, now, days: 1, prices: { BTC: 91_000 }, indexHours: 12 });
  expect(summary?.counts).toMatchObject({ read: 2 * 24, new: 2 * 24 });
  expect(await perMarket(0, now)).toEqual(complete({ bitcoin: 91_000 }, now, 24));
  const ticksBetween = async (fromMs: number, toMs: number) =>
    (await env.store.rows<{ n: number }>("SELECT count() AS n FROM index_ticks WHERE asset = 'bitcoin' AND second >= toDateTime({from:Int64}, 'UTC') AND second < toDateTime({to:Int64}, 'UTC')", { from: Math.floor(fromMs / 1000), to: Math.floor(toMs / 1000) }))[0]?.n;
  // Trades from 24 hours back, the index from 12 hours back (the importer's clock, a moment after `now`).
  expect(await ticksBetween(now - 25 * hourMs, now - 12 * hourMs)).toBe(0);
  expect(await ticksBetween(now - 12 * hourMs, now + hourMs)).toBeGreaterThan(0);
});
