// The demo's SIMULATED archives (simulator/archiveFiles.ts) are the venues' formats: every file is
// read back as `npm run import` reads it (history/archiveFile.ts for the .zip and .csv.gz, each
// venue's parser and file-name rule in history/archives/) and gives exactly the trades the walk
// made (simulator/history.ts), under ids that end just below the simulator's live ones. The
// walk itself: every step on two markets of each asset, ending at the model's price.
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, test } from 'vitest';
import { fileSha256, lineBatches } from '../../history/archiveFile.ts';
import { isRefusal, type ArchiveFormat, type ArchiveTrade, type LineContext } from '../../history/archives/format.ts';
import { findArchiveSource } from '../../history/archives/registry.ts';
import { periodText } from '../../history/archives/source.ts';
import { checksumOf } from '../../history/download.ts';
import { archivePath, readDemoArchives, writeDemoArchives } from '../archiveFiles.ts';
import { demoHistoryTrades, planDemoHistory, priceDecimalsOf, stepsOf, tradesOf } from '../history.ts';

const dirs: string[] = [];
const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'mds-demo-archives-'));
  dirs.push(dir);
  return dir;
};
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

const hourMs = 3_600_000;
// 2026-10-02 12:00 UTC: a history of 4 days at hourly steps spans September and October.
const now = Date.parse('2026-10-02T12:00:00Z');
const prices: Record<string, number> = { BTC: 90_000, ETH: 3_000.5, SHIB: 0.00002 };
const plan = planDemoHistory({ days: 4, stepMs: hourMs, now, seed: 11, tickers: Object.keys(prices), priceOf: (t) => prices[t]! });
const steps = stepsOf(plan);
/** The simulator's first live id on each market (as infra/roles/demo.ts reads it): distinct per market. */
const liveIds: Record<string, number> = { BTCUSDT: 1_500_000, ETHUSDT: 1_000_097, SHIBUSDT: 1_999_999, BTC_USDT: 1_234_567, ETH_USDT: 1_700_001, SHIB_USDT: 1_000_200 };
const firstLiveId = (_venue: string, symbol: string) => liveIds[symbol]!;

/** Every trade of an archive file, parsed as the importer parses it. */
async function readBack(venue: string, path: string, name: string): Promise<ArchiveTrade[]> {
  const source = findArchiveSource(venue)!;
  const named = source.parseName(name);
  expect(named, `${name} is named as ${venue} names its files`).toBeDefined();
  const format = source.kinds[named!.kind] as ArchiveFormat;
  const context: LineContext = { market: named!.market ?? '', lineNumber: 0, period: periodText(named!.period) };
  const trades: ArchiveTrade[] = [];
  for await (const { lines } of lineBatches(path)) {
    for (const line of lines) {
      context.lineNumber += 1;
      if (line === '') continue;
      const columns = format.header(line);
      if (columns) context.columns = columns;
      else {
        const row = format.parse(line, context);
        if (row === undefined || isRefusal(row)) throw new Error(`${name}:${context.lineNumber} refused: ${JSON.stringify(row)}`);
        trades.push(row);
      }
    }
  }
  return trades;
}

test('the walk: every step on a Binance and a Gate market of each asset, one step apart, ending at the model price one step before now', () => {
  const trades = [...demoHistoryTrades(plan)];
  expect(trades).toHaveLength(tradesOf(plan));
  expect(trades).toHaveLength(3 * 2 * 96);
  for (const [ticker, price] of Object.entries(prices)) {
    for (const symbol of [`${ticker}USDT`, `${ticker}_USDT`]) {
      const market = trades.filter((t) => t.symbol === symbol);
      expect(market.map((t) => t.index)).toEqual([...Array(steps).keys()]);
      expect(market.map((t) => t.ts)).toEqual([...Array(steps).keys()].map((i) => now - (steps - i) * hourMs));
      expect(Number(market.at(-1)!.price)).toBeCloseTo(price, priceDecimalsOf(price));
      expect(market.every((t) => Number(t.quantity) > 0)).toBe(true);
    }
  }
  // The same plan gives the same trades.
  expect([...demoHistoryTrades(plan)]).toEqual(trades);
});

test('the archives are the venues\' files: parsed back by the importer\'s own parsers, they are the walk\'s trades, ids just below the live ones', async () => {
  const dir = tempDir();
  const archives = await writeDemoArchives(dir, plan, firstLiveId, now);
  // Binance: one zip a month with its .CHECKSUM; Gate: one .csv.gz a month. September and October.
  expect(readdirSync(join(dir, 'binance')).sort()).toEqual(
    ['BTCUSDT', 'ETHUSDT', 'SHIBUSDT'].flatMap((m) => [`${m}-trades-2026-09.zip`, `${m}-trades-2026-09.zip.CHECKSUM`, `${m}-trades-2026-10.zip`, `${m}-trades-2026-10.zip.CHECKSUM`]),
  );
  expect(readdirSync(join(dir, 'gate')).sort()).toEqual(['BTC_USDT', 'ETH_USDT', 'SHIB_USDT'].flatMap((m) => [`${m}-202609.csv.gz`, `${m}-202610.csv.gz`]));
  expect(archives.files).toHaveLength(12);

  const walk = [...demoHistoryTrades(plan)];
  const parsed = new Map<string, ArchiveTrade[]>();
  for (const file of archives.files) {
    const path = archivePath(archives, file);
    const rows = await readBack(file.venue, path, file.name);
    expect(rows.length).toBeGreaterThan(0);
    const key = `${file.venue}/${rows[0]!.market}`;
    parsed.set(key, [...(parsed.get(key) ?? []), ...rows]);
    // Each line laid out as the venue's own (history/archives/__tests__/fixtures/SOURCES.md):
    // Binance `4359935386,93576.00000000,0.00136000,127.26336000,1735689600010866,True,True`,
    // Gate `1767225600.277618,152559793,87645.7,0.000057,1`.
    const lines: string[] = [];
    for await (const batch of lineBatches(path)) lines.push(...batch.lines.filter((l) => l !== ''));
    const layout = file.venue === 'binance' ? /^\d+,\d+\.\d{8},\d+\.\d{8},\d+\.\d{8},\d{16},(True|False),True$/ : /^\d{10}\.\d{6},\d+,\d+(\.\d+)?,\d+(\.\d+)?,[12]$/;
    expect(lines.filter((l) => !layout.test(l))).toEqual([]);
    if (file.venue === 'binance') {
      const stated = checksumOf(readFileSync(`${path}.CHECKSUM`, 'utf8'));
      expect(stated).toBe(await fileSha256(path));
      expect(readFileSync(`${path}.CHECKSUM`, 'utf8')).toBe(`${stated}  ${file.name}\n`);
    }
  }
  for (const venue of ['binance', 'gate'] as const) {
    for (const ticker of Object.keys(prices)) {
      const symbol = venue === 'binance' ? `${ticker}USDT` : `${ticker}_USDT`;
      const made = walk.filter((t) => t.venue === venue && t.symbol === symbol);
      const read = parsed.get(`${venue}/${symbol}`)!;
      expect(read.map((t) => ({ market: t.market, ts: t.ts, price: Number(t.price), quantity: Number(t.quantity), side: t.side }))).toEqual(
        made.map((t) => ({ market: symbol, ts: t.ts, price: Number(t.price), quantity: Number(t.quantity), side: t.side })),
      );
      // Consecutive ids ending one below the first live id: no collision, and Binance's numbers run on into the live ones.
      expect(read.map((t) => t.tradeId)).toEqual(made.map((_, i) => String(liveIds[symbol]! - steps + i)));
    }
  }
});

test('the set is marked SIMULATED and complete only with its manifest; a live id too low to leave room is refused', async () => {
  const dir = tempDir();
  expect(readDemoArchives(dir)).toBeUndefined();
  const archives = await writeDemoArchives(dir, plan, firstLiveId, now);
  expect(readFileSync(join(dir, 'README.txt'), 'utf8')).toMatch(/^SIMULATED TRADES: NOT MARKET DATA\./);
  expect(readDemoArchives(dir)).toEqual(archives);
  expect(archives).toMatchObject({ trades: tradesOf(plan), from: now - steps * hourMs, to: now - hourMs, writtenAt: now });

  // An attempt cut short (no manifest) is written again from scratch.
  const cut = tempDir();
  writeFileSync(join(cut, 'stale.part'), 'x');
  await writeDemoArchives(cut, plan, firstLiveId, now);
  expect(readdirSync(cut).sort()).toEqual(['README.txt', 'binance', 'gate', 'manifest.json']);

  await expect(writeDemoArchives(tempDir(), plan, () => steps, now)).rejects.toThrow(/no room below/);
});
