// Recorded archive files of each supported format imported into a test store, as `npm run import`
// does: counts, ids, sides, base units and times in `trades`, refusals counted by reason, and a
// second import (of the same file, even forced to read it again) adds nothing.
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, onTestFinished, test } from 'vitest';
import { openTestStore, silentLog } from '../../test/support/harness.ts';
import { defaultIndexParams } from '../../aggregate/indexPrice.ts';
import { defaultIndexSchedule } from '../../aggregate/indexRunner.ts';
import type { Store } from '../../infra/store.ts';
import { findArchiveSource } from '../archives/registry.ts';
import type { ArchiveFormat } from '../archives/format.ts';
import { storeTarget } from '../directTarget.ts';
import { refusals, type FileJob } from '../importFile.ts';
import { importFiles } from '../importRun.ts';
import type { ImportTarget } from '../importTarget.ts';

const fixture = (path: string) => fileURLToPath(new URL(`../archives/__tests__/fixtures/${path}`, import.meta.url));

let store: Store;
let target: ImportTarget;
let dispose: () => Promise<void>;
beforeAll(async () => {
  ({ store, dispose } = await openTestStore());
  target = storeTarget(store, { embedded: true, index: { params: defaultIndexParams, schedule: defaultIndexSchedule }, log: silentLog });
});
afterAll(async () => {
  await target.close();
  await dispose();
});

function jobOf(venue: string, path: string, markets?: string[]): FileJob {
  const source = findArchiveSource(venue)!;
  const name = path.split('/').at(-1)!;
  const parsed = source.parseName(name)!;
  return { path: fixture(path), name, source, format: source.kinds[parsed.kind] as ArchiveFormat, market: parsed.market, period: parsed.period, ...(markets ? { markets: new Set(markets) } : {}) };
}

const now = Date.UTC(2027, 0, 1);
const run = (jobs: FileJob[], force = false) => importFiles(jobs, { target, now, force, chunkRows: 100 });

interface Stored {
  trade_id: string;
  ts: number;
  price: number;
  quantity: number;
  side: string;
  asset: string;
  quote: string;
}
const storedOf = (venue: string, market: string) =>
  store.rows<Stored>(
    `SELECT trade_id, toUnixTimestamp64Milli(ts) AS ts, price, quantity, toString(side) AS side, asset, quote FROM trades
     WHERE venue = {venue:String} AND market = {market:String} ORDER BY ts, trade_id`,
    { venue, market },
  );

describe('binance spot trades (µs and ms files)', () => {
  test('every row stored under its id, taker side, base units, ms times; chunked in 100s', async () => {
    const summary = await run([jobOf('binance', 'binance/BTCUSDT-trades-2025-01-01.first210.csv'), jobOf('binance', 'binance/BTCUSDT-trades-2024-12-31.first217.csv')]);
    expect(summary.failed).toEqual([]);
    expect(summary.counts).toMatchObject({ read: 427, new: 427, held: 0 });
    const rows = await storedOf('binance', 'BTCUSDT');
    expect(rows).toHaveLength(427);
    expect(rows.find((r) => r.trade_id === '4359935386')).toEqual({ trade_id: '4359935386', ts: 1735689600010, price: 93576, quantity: 0.00136, side: 'sell', asset: 'bitcoin', quote: 'USDT' });
    expect(rows.find((r) => r.trade_id === '4356587539')).toEqual({ trade_id: '4356587539', ts: 1735603200213, price: 92792.05, quantity: 0.00129, side: 'buy', asset: 'bitcoin', quote: 'USDT' });
    // The two files are consecutive in ids across the day boundary: 4356587539.. and 4359935386..
    expect(new Set(rows.map((r) => r.trade_id)).size).toBe(427);
    const candles = await store.rows<{ n: number }>("SELECT sum(trade_count) AS n FROM candles_1m WHERE venue = 'binance' AND market = 'BTCUSDT'");
    expect(candles[0]!.n).toBe(427);
  });

  test('a second import of the same files adds nothing: skipped by sha256, and when forced to read them, every row already held', async () => {
    const jobs = [jobOf('binance', 'binance/BTCUSDT-trades-2025-01-01.first210.csv'), jobOf('binance', 'binance/BTCUSDT-trades-2024-12-31.first217.csv')];
    const again = await run(jobs);
    expect(again.files.map((f) => f.state)).toEqual(['already imported', 'already imported']);
    expect(again.counts).toMatchObject({ read: 0, new: 0 });
    const forced = await run(jobs, true);
    expect(forced.counts).toMatchObject({ read: 427, new: 0, held: 427 });
    expect(await storedOf('binance', 'BTCUSDT')).toHaveLength(427);
    const candles = await store.rows<{ n: number }>("SELECT sum(trade_count) AS n FROM candles_1m WHERE venue = 'binance' AND market = 'BTCUSDT'");
    expect(candles[0]!.n).toBe(427);
  });
});

test('binance spot aggTrades: single-fill rows stored as those trades, the others refused by reason, never under their aggTrade id', async () => {
  const summary = await run([jobOf('binance', 'binance/BTCUSDT-aggTrades-2026-01-01.first5min.csv')]);
  const [file] = summary.files;
  const refused = [...file!.counts.refused];
  expect(refused).toHaveLength(1);
  expect(refused[0]![0]).toMatch(/several fills/);
  expect(file!.counts.new + refused[0]![1]).toBe(1639);
  expect(file!.counts.new).toBeGreaterThan(0);
  const rows = await store.rows<{ n: number; low: string; high: string }>(
    "SELECT count() AS n, min(trade_id) AS low, max(trade_id) AS high FROM trades WHERE venue = 'binance' AND ts >= '2026-01-01 00:00:00'",
  );
  expect(rows[0]!.n).toBe(file!.counts.new);
  // Trade ids (5723703861..), not aggTrade ids (3800397495..).
  expect(Number(rows[0]!.low)).toBeGreaterThanOrEqual(5723703861);
  expect(Number(rows[0]!.high)).toBeLessThanOrEqual(5723708636);
});

test('binance-futures aggTrades: the aggTrade id is the stored id, as the collector stores @aggTrade', async () => {
  const summary = await run([jobOf('binance-futures', 'binance-futures/BTCUSDT-aggTrades-2026-09-17.1428utc.first150.csv')]);
  expect(summary.counts).toMatchObject({ read: 150, new: 150, held: 0 });
  const rows = await storedOf('binance-futures', 'BTCUSDT');
  expect(rows[0]).toEqual({ trade_id: '3454067270', ts: 1789655280294, price: 76988.7, quantity: 0.037, side: 'buy', asset: 'bitcoin', quote: 'USDT' });
  expect(rows).toHaveLength(150);
});

test('bybit spot (ids of the file, not the venue\'s): rows inside the span the store held of the market are refused, the rest stored', async () => {
  // Two trades the collector stored that day, under venue ids: 10:00 and 12:00.
  const live = (id: string, ts: number) => ({ venue: 'bybit', market: 'UNIUSDC', asset: 'uniswap', quote: 'USDC', trade_id: id, ts, received_at: ts, price: 6, quantity: 1, side: 'buy' });
  const from = Date.UTC(2025, 4, 17, 10);
  const to = Date.UTC(2025, 4, 17, 12);
  await store.insert('trades', [live('2290000000061666327', from), live('2290000000061666999', to)]);
  const summary = await run([jobOf('bybit', 'bybit/UNIUSDC_2025-05-17.csv')]);
  const rows = await storedOf('bybit', 'UNIUSDC');
  const imported = rows.filter((r) => r.trade_id.startsWith('2025-05-17#'));
  expect(imported.every((r) => r.ts < from || r.ts > to)).toBe(true);
  const covered = summary.counts.refused.get(refusals.covered) ?? 0;
  expect(covered).toBeGreaterThan(0);
  expect(imported.length + covered).toBe(219);
  expect(summary.counts.new).toBe(imported.length);
  expect(imported.find((r) => r.trade_id === '2025-05-17#1')).toEqual({ trade_id: '2025-05-17#1', ts: 1747442146179, price: 6.016, quantity: 0.76, side: 'sell', asset: 'uniswap', quote: 'USDC' });
});

test('okx spot aggtrades: stored (nothing of the market held that day), the day at UTC+8', async () => {
  const summary = await run([jobOf('okx', 'okx/BTC-USDT-aggtrades-2023-11-18.bbgo.csv')]);
  expect(summary.counts).toMatchObject({ read: 15, new: 15 });
  const rows = await storedOf('okx', 'BTC-USDT');
  expect(rows[0]).toEqual({ trade_id: '450372032', ts: 1700239040621, price: 35914.3, quantity: 0.00132007, side: 'buy', asset: 'bitcoin', quote: 'USDT' });
});

test('a market the catalog does not map is refused, counted with its reason (bybit-linear FXSUSDT)', async () => {
  const summary = await run([jobOf('bybit-linear', 'bybit-linear/FXSUSDT2023-10-10.bbgo.csv')]);
  expect(summary.counts.new).toBe(0);
  expect([...summary.counts.refused]).toEqual([['market FXSUSDT: the catalog maps no asset to FXS on bybit-linear', 15]]);
  expect(await storedOf('bybit-linear', 'FXSUSDT')).toEqual([]);
});

test('trades newer than 2 hours ago are refused: they are the live collectors\'', async () => {
  // Read as if at 16:28:03: the rows from 14:28:03 on (2 hours before) are refused; the earlier ones are held already.
  const aggs = jobOf('binance-futures', 'binance-futures/BTCUSDT-aggTrades-2026-09-17.1428utc.first150.csv');
  const summary = await importFiles([aggs], { target, now: Date.UTC(2026, 8, 17, 16, 28, 3), force: true, chunkRows: 100 });
  const tooNew = summary.counts.refused.get(refusals.tooNew) ?? 0;
  expect(tooNew).toBeGreaterThan(0);
  expect(tooNew + summary.counts.held).toBe(150);
});

test('with no sink beside the import (liveHorizonMs 0, the demo), trades up to `now` are stored; later ones are still refused', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'mds-horizon-'));
  onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
  const path = join(dir, 'ETHUSDT-trades-2026-09-17.csv');
  const at = Date.UTC(2026, 8, 17, 16, 28, 3);
  const rows = [
    [7001, at - 30 * 60_000],
    [7002, at - 60_000],
    [7003, at + 60_000],
  ];
  writeFileSync(path, rows.map(([id, ts]) => `${id},2300.50000000,0.10000000,230.05000000,${ts},False,True\n`).join(''));
  const job: FileJob = { ...jobOf('binance', 'binance/BTCUSDT-trades-2024-12-31.first217.csv'), path, name: 'ETHUSDT-trades-2026-09-17.csv', market: 'ETHUSDT', period: { daily: '2026-09-17' } };
  const byDefault = await importFiles([job], { target, now: at, force: false, chunkRows: 100 });
  expect(byDefault.counts).toMatchObject({ read: 3, new: 0 });
  expect(byDefault.counts.refused.get(refusals.tooNew)).toBe(3);
  const noSink = await importFiles([job], { target, now: at, force: true, chunkRows: 100, liveHorizonMs: 0 });
  expect(noSink.counts).toMatchObject({ read: 3, new: 2 });
  expect(noSink.counts.refused.get(refusals.tooNew)).toBe(1);
  expect((await storedOf('binance', 'ETHUSDT')).map((r) => [r.trade_id, r.ts])).toEqual([
    ['7001', at - 30 * 60_000],
    ['7002', at - 60_000],
  ]);
});

test('BitMEX: a .csv.gz of every market, the asked ones imported, base units from homeNotional', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'mds-bitmex-'));
  onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
  const path = join(dir, '20200504.csv.gz');
  // The recorded row (fixtures/SOURCES.md) under the archive's header.
  const header = 'timestamp,symbol,side,size,price,tickDirection,trdMatchID,grossValue,homeNotional,foreignNotional';
  const row = '2020-05-04D00:00:03.367608000,XBTUSD,Buy,1,8907.5,ZeroPlusTick,9d3d65b9-f073-ec03-eceb-61c49761ff1d,11226,0.00011226,1';
  writeFileSync(path, gzipSync(`${header}\n${row}\n`));
  const source = findArchiveSource('bitmex')!;
  const job: FileJob = { path, name: '20200504.csv.gz', source, format: source.kinds.trade as ArchiveFormat, period: { daily: '2020-05-04' }, markets: new Set(['XBTUSD']) };
  expect((await run([job])).counts).toMatchObject({ read: 1, new: 1 });
  expect(await storedOf('bitmex', 'XBTUSD')).toEqual([{ trade_id: '9d3d65b9-f073-ec03-eceb-61c49761ff1d', ts: 1588550403367, price: 8907.5, quantity: 0.00011226, side: 'buy', asset: 'bitcoin', quote: 'USD' }]);
  const other = await run([{ ...job, markets: new Set(['ETHUSD']) }], true);
  expect([...other.counts.refused]).toEqual([[refusals.otherMarket, 1]]);
});

test('the chunk spool is made at the first chunk and removed at close: a target that imports nothing leaves no directory', async () => {
  const scratch = mkdtempSync(join(tmpdir(), 'mds-spool-test-'));
  onTestFinished(() => rmSync(scratch, { recursive: true, force: true }));
  const spools = () => readdirSync(scratch).filter((name) => name.startsWith('mds-import-'));
  const previous = process.env.TMPDIR;
  // os.tmpdir() reads TMPDIR at each call: the spool goes to the scratch directory.
  process.env.TMPDIR = scratch;
  try {
    const idle = storeTarget(store, { embedded: true, index: { params: defaultIndexParams, schedule: defaultIndexSchedule }, log: silentLog });
    expect(spools()).toEqual([]);
    await idle.close();
    const importing = storeTarget(store, { embedded: true, index: { params: defaultIndexParams, schedule: defaultIndexSchedule }, log: silentLog });
    // Trades the store does not hold yet (a chunk of rows the store holds is not inserted).
    const path = join(scratch, 'SOLUSDT-trades-2026-09-17.csv');
    const at = Date.UTC(2026, 8, 17, 12);
    writeFileSync(path, [9001, 9002, 9003].map((id, i) => `${id},150.25000000,1.00000000,150.25000000,${at + i * 1000},False,True\n`).join(''));
    const job: FileJob = { ...jobOf('binance', 'binance/BTCUSDT-trades-2024-12-31.first217.csv'), path, name: 'SOLUSDT-trades-2026-09-17.csv', market: 'SOLUSDT', period: { daily: '2026-09-17' } };
    const summary = await importFiles([job], { target: importing, now, force: false, chunkRows: 100 });
    expect(summary.counts).toMatchObject({ read: 3, new: 3 });
    expect(spools()).toHaveLength(1);
    await importing.close();
    expect(spools()).toEqual([]);
  } finally {
    if (previous === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = previous;
  }
});

test('the ledger (import_files): a row when a file is first read, one per chunk done (the last one says inserted), and one write marking every file of the run complete', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'mds-ledger-'));
  onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
  const at = Date.UTC(2026, 8, 18, 12);
  const jobs = ['ADAUSDT', 'XRPUSDT'].map((market, m): FileJob => {
    const path = join(dir, `${market}-trades-2026-09-18.csv`);
    // 250 trades: chunks of 100, 100 and 50.
    writeFileSync(path, Array.from({ length: 250 }, (_, i) => `${8000 + i},1.50000000,1.00000000,1.50000000,${at + m * 1000 + i * 10_000},False,True\n`).join(''));
    return { ...jobOf('binance', 'binance/BTCUSDT-trades-2024-12-31.first217.csv'), path, name: `${market}-trades-2026-09-18.csv`, market, period: { daily: '2026-09-18' } };
  });
  const writes: { name: string; state: string; chunks_done: number }[][] = [];
  const recording: ImportTarget = {
    ...target,
    async insert(table, rows, token) {
      if (table === 'import_files') writes.push(rows.map((r) => ({ name: String(r.name), state: String(r.state), chunks_done: Number(r.chunks_done) })));
      await target.insert(table, rows, token);
    },
  };
  const summary = await importFiles(jobs, { target: recording, now, force: false, chunkRows: 100 });
  expect(summary.counts).toMatchObject({ read: 500, new: 500 });
  const [ada, xrp] = jobs.map((j) => j.name);
  const perFile = (name: string | undefined) => [
    [{ name, state: 'reading', chunks_done: 0 }],
    [{ name, state: 'reading', chunks_done: 1 }],
    [{ name, state: 'reading', chunks_done: 2 }],
    [{ name, state: 'inserted', chunks_done: 3 }],
  ];
  expect(writes).toEqual([
    ...perFile(ada),
    ...perFile(xrp),
    [
      { name: ada, state: 'complete', chunks_done: 3 },
      { name: xrp, state: 'complete', chunks_done: 3 },
    ],
  ]);
  // The newest row of each file wins: both complete, whatever the order of the rows.
  const records = await store.rows<{ name: string; state: string }>("SELECT name, toString(state) AS state FROM import_files FINAL WHERE name IN {names:Array(String)} ORDER BY name", { names: [ada!, xrp!] });
  expect(records).toEqual([
    { name: ada, state: 'complete' },
    { name: xrp, state: 'complete' },
  ]);
});
