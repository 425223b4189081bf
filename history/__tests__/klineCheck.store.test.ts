// Imported candles against the venue's own: Binance spot aggTrades of 2026-01-01 00:00-00:04
// (fixtures/SOURCES.md) rebuild Binance's own 1m kline of 00:00, which a public test recorded:
// 1767225600000000,87648.21,87648.22,87632.74,87648.00,4.08,1767225659999999,357625.77,1193,1.79,157651.51,0
// (open time, o, h, l, c, volume and quote volume to 2 decimals, trade count, taker-buy volumes).
// The import refuses the aggTrades of several fills (binance stores each fill under its trade id),
// so its candle of that minute holds only the single fills. The check of our views is therefore
// made on the aggTrade rows themselves, each stored as one row of a throwaway market
// (kline-check:BTCUSDT) through the same `trades` table and views: o, h, l, c, volume and quote
// volume; the kline's trade count (fills) is the sum of lastId - firstId + 1 of the minute's rows.
//
// And through the import itself: a whole minute of Binance spot `trades` (2021-01-03 00:00, every
// trade of the minute, ids 540342126-540343955) imported as published gives Binance's own 1m kline
// of that minute, every field (fixtures/SOURCES.md names both files).
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { defaultIndexParams } from '../../aggregate/indexPrice.ts';
import { defaultIndexSchedule } from '../../aggregate/indexRunner.ts';
import type { Store } from '../../infra/store.ts';
import { openTestStore, silentLog } from '../../test/support/harness.ts';
import { binanceArchive } from '../archives/binance.ts';
import type { ArchiveFormat } from '../archives/format.ts';
import { storeTarget } from '../directTarget.ts';
import { importFiles } from '../importRun.ts';

const path = new URL('../archives/__tests__/fixtures/binance/BTCUSDT-aggTrades-2026-01-01.first5min.csv', import.meta.url);
const kline = { open: 87648.21, high: 87648.22, low: 87632.74, close: 87648.0, volume: 4.08, quoteVolume: 357625.77, trades: 1193 };
const minute = Date.UTC(2026, 0, 1, 0, 0);

let store: Store;
let dispose: () => Promise<void>;
beforeAll(async () => ({ store, dispose } = await openTestStore()));
afterAll(() => dispose());

interface Candle {
  open: number;
  high: number;
  low: number;
  close: number;
  volume: number;
  quote_volume: number;
  trade_count: number;
}
/** Our 1m candle of `venue`'s BTCUSDT at `at` (unix ms), merged from the view's rows. */
const candleOf = async (venue: string, at = minute) =>
  (
    await store.rows<Candle>(
      `SELECT argMinMerge(open) AS open, max(high) AS high, min(low) AS low, argMaxMerge(close) AS close, sum(volume) AS volume,
              sum(quote_volume) AS quote_volume, sum(trade_count) AS trade_count
       FROM candles_1m WHERE venue = {venue:String} AND market = 'BTCUSDT' AND bucket = toDateTime({at:Int64}, 'UTC')`,
      { venue, at: at / 1000 },
    )
  )[0]!;

test('the aggTrades of 00:00 through our views give Binance\'s 1m kline: o, h, l, c, volume, quote volume; fills 1193', async () => {
  // Columns: aggId, price, qty, firstId, lastId, time (µs), isBuyerMaker, isBestMatch.
  const rows = readFileSync(path, 'utf8').split('\n').filter(Boolean).map((l) => l.split(','));
  const ofMinute = rows.filter((c) => Math.floor(Number(c[5]) / 1000) < minute + 60_000);
  expect(ofMinute.reduce((n, c) => n + Number(c[4]) - Number(c[3]) + 1, 0)).toBe(kline.trades);
  await store.insert(
    'trades',
    rows.map((c) => {
      const ts = Math.floor(Number(c[5]) / 1000);
      return { venue: 'kline-check', market: 'BTCUSDT', asset: 'bitcoin', quote: 'USDT', trade_id: c[0], ts, received_at: ts, price: Number(c[1]), quantity: Number(c[2]), side: c[6] === 'True' ? 'sell' : 'buy' };
    }),
  );
  const candle = await candleOf('kline-check');
  expect([candle.open, candle.high, candle.low, candle.close]).toEqual([kline.open, kline.high, kline.low, kline.close]);
  expect(Math.floor(candle.volume * 100) / 100).toBe(kline.volume);
  expect(Math.floor(candle.quote_volume * 100) / 100).toBe(kline.quoteVolume);
  // One row per aggTrade here, one per fill in the kline.
  expect(candle.trade_count).toBe(ofMinute.length);
});

test('the import itself stores only the single fills of that minute: its candle falls short of the kline, as the summary says', async () => {
  const target = storeTarget(store, { embedded: true, index: { params: defaultIndexParams, schedule: defaultIndexSchedule }, log: silentLog });
  const job = { path: path.pathname, name: 'BTCUSDT-aggTrades-2026-01-01.first5min.csv', source: binanceArchive, format: binanceArchive.kinds.aggTrades as ArchiveFormat, market: 'BTCUSDT', period: { daily: '2026-01-01' } };
  const summary = await importFiles([job], { target, now: Date.UTC(2027, 0, 1), force: false });
  await target.close();
  expect([...summary.counts.refused.keys()]).toEqual(['aggTrade of several fills (binance stores each fill: import `trades` for them)']);
  const candle = await candleOf('binance');
  expect(candle.trade_count).toBeGreaterThan(0);
  expect(candle.trade_count).toBeLessThan(kline.trades);
  expect(candle.volume).toBeLessThan(kline.volume);
  expect(candle.high).toBeLessThanOrEqual(kline.high);
  expect(candle.low).toBeGreaterThanOrEqual(kline.low);
});

const wholeMinute = {
  trades: new URL('../archives/__tests__/fixtures/binance/BTCUSDT-trades-2021-01-03.first1830.csv', import.meta.url),
  kline: new URL('../archives/__tests__/fixtures/binance/BTCUSDT-1m-2021-01-03.first1.csv', import.meta.url),
};

test("a whole minute of Binance spot trades, imported as published, gives Binance's own 1m kline of it: o, h, l, c, volume, quote volume, trade count", async () => {
  // Binance's kline row: open time, o, h, l, c, volume, close time, quote volume, trades, taker-buy volumes, ignore.
  const published = readFileSync(wholeMinute.kline, 'utf8').trim().split(',');
  const at = Number(published[0]);
  // The candles are the check; the index after the import spans the trades and a volume window of a minute, not a day.
  const target = storeTarget(store, { embedded: true, index: { params: { ...defaultIndexParams, volumeWindowMinutes: 1 }, schedule: defaultIndexSchedule }, log: silentLog });
  const job = { path: wholeMinute.trades.pathname, name: 'BTCUSDT-trades-2021-01-03.csv', source: binanceArchive, format: binanceArchive.kinds.trades as ArchiveFormat, market: 'BTCUSDT', period: { daily: '2021-01-03' } };
  const summary = await importFiles([job], { target, now: Date.UTC(2027, 0, 1), force: false });
  await target.close();
  expect(summary.counts).toMatchObject({ read: 1830, new: 1830 });
  const candle = await candleOf('binance', at);
  expect([candle.open, candle.high, candle.low, candle.close]).toEqual(published.slice(1, 5).map(Number));
  expect(candle.trade_count).toBe(Number(published[8]));
  // Sums of floats against Binance's decimals: equal to their last published digit (8 decimals).
  expect(candle.volume.toFixed(8)).toBe(published[5]);
  expect(candle.quote_volume.toFixed(8)).toBe(published[7]);
});
