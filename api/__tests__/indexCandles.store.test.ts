// The one read of index candles (api/read/indexCandles.ts) that /v1/coins/{id}/ohlc, the status
// page and the stream share: few trades, every expected candle written out by hand.
import { afterAll, beforeAll, expect, test } from 'vitest';
import { latestIndexBucketBefore, loadIndexCandles } from '../read/indexCandles.ts';
import { openTestStore, trade } from '../../test/support/harness.ts';

const minute = 60_000;
/** A Monday, 10:00 UTC. */
const T = Date.UTC(2026, 0, 5, 10, 0);
const usd = { venue: 'coinbase', market: 'BTC-USD', quote: 'USD' };
const usdt = { venue: 'binance', market: 'BTCUSDT', quote: 'USDT' };
// Not an index market: its prices would show in any candle that counted it.
const eur = { venue: 'kraken', market: 'XBTEUR', quote: 'EUR' };

const trades = [
  // bitcoin, bucket T: two markets trade in the same millisecond; the trade id orders them.
  trade({ ...usdt, asset: 'bitcoin', trade_id: 'b', ts: T + 1_000, price: 101, quantity: 1 }),
  trade({ ...usd, asset: 'bitcoin', trade_id: 'a', ts: T + 1_000, price: 100, quantity: 2 }),
  trade({ ...usd, asset: 'bitcoin', trade_id: 'c', ts: T + 30_000, price: 104, quantity: 0.5 }),
  trade({ ...eur, asset: 'bitcoin', trade_id: 'd', ts: T + 40_000, price: 900, quantity: 8 }),
  trade({ ...usdt, asset: 'bitcoin', trade_id: 'e', ts: T + 50_000, price: 99, quantity: 0.25 }),
  // bitcoin, bucket T + 1 min.
  trade({ ...usd, asset: 'bitcoin', trade_id: 'f', ts: T + minute + 5_000, price: 105, quantity: 1 }),
  // bitcoin, bucket T + 2 min: only the EUR market, so no index candle.
  trade({ ...eur, asset: 'bitcoin', trade_id: 'g', ts: T + 2 * minute, price: 950, quantity: 1 }),
  // bitcoin, bucket T + 3 min.
  trade({ ...usdt, asset: 'bitcoin', trade_id: 'h', ts: T + 3 * minute, price: 103, quantity: 4 }),
  // ethereum, buckets T + 1 min and T + 5 min.
  trade({ ...usd, market: 'ETH-USD', asset: 'ethereum', trade_id: 'i', ts: T + minute + 1, price: 3_000, quantity: 3 }),
  trade({ ...usd, market: 'ETH-USD', asset: 'ethereum', trade_id: 'j', ts: T + 5 * minute + 59_999, price: 3_010, quantity: 1 }),
];

const btc = [
  { timestamp: T, open: 100, high: 104, low: 99, close: 99, volume: 3.75 },
  { timestamp: T + minute, open: 105, high: 105, low: 105, close: 105, volume: 1 },
  { timestamp: T + 3 * minute, open: 103, high: 103, low: 103, close: 103, volume: 4 },
];
const eth = [
  { timestamp: T + minute, open: 3_000, high: 3_000, low: 3_000, close: 3_000, volume: 3 },
  { timestamp: T + 5 * minute, open: 3_010, high: 3_010, low: 3_010, close: 3_010, volume: 1 },
];

let env: Awaited<ReturnType<typeof openTestStore>>;
beforeAll(async () => {
  env = await openTestStore();
  // Two inserts, so the buckets of T are merged from several parts at query time.
  await env.store.insert('trades', trades.slice(0, 3));
  await env.store.insert('trades', trades.slice(3));
});
afterAll(async () => {
  await env?.dispose();
});

const byAsset = (entries: Record<string, unknown[]>) => new Map(Object.entries(entries));

test('merges the index markets of each asset per bucket, oldest first; an asset without trades has no entry', async () => {
  const read = await loadIndexCandles(env.store, { table: 'candles_1m', assets: ['bitcoin', 'ethereum', 'solana'], limit: 100 });
  expect(read).toEqual(byAsset({ bitcoin: btc, ethereum: eth }));
});

test('keeps the latest `limit` buckets of each asset, not of all of them together', async () => {
  const read = await loadIndexCandles(env.store, { table: 'candles_1m', assets: ['bitcoin', 'ethereum'], limit: 1 });
  expect(read).toEqual(byAsset({ bitcoin: [btc[2]], ethereum: [eth[1]] }));
  const two = await loadIndexCandles(env.store, { table: 'candles_1m', assets: ['bitcoin', 'ethereum'], limit: 2 });
  expect(two).toEqual(byAsset({ bitcoin: btc.slice(1), ethereum: eth }));
});

test('reads the buckets that start in [from, to)', async () => {
  const read = await loadIndexCandles(env.store, { table: 'candles_1m', assets: ['bitcoin', 'ethereum'], from: T + minute, to: T + 5 * minute, limit: 100 });
  expect(read).toEqual(byAsset({ bitcoin: btc.slice(1), ethereum: [eth[0]] }));
  const none = await loadIndexCandles(env.store, { table: 'candles_1m', assets: ['bitcoin'], from: T + 4 * minute, to: T + 5 * minute, limit: 100 });
  expect(none).toEqual(new Map());
});

test('merges a longer bucket the same way', async () => {
  const read = await loadIndexCandles(env.store, { table: 'candles_1h', assets: ['bitcoin'], limit: 100 });
  expect(read).toEqual(byAsset({ bitcoin: [{ timestamp: T, open: 100, high: 105, low: 99, close: 103, volume: 8.75 }] }));
});

test('finds the latest index bucket before a time, by the index markets only', async () => {
  // T + 2 min has only a EUR trade: not an index bucket.
  expect(await latestIndexBucketBefore(env.store, 'candles_1m', 'bitcoin', T + 3 * minute)).toBe(T + minute);
  // A bucket that starts before a time that is not a whole second is before it.
  expect(await latestIndexBucketBefore(env.store, 'candles_1m', 'bitcoin', T + 3 * minute + 1)).toBe(T + 3 * minute);
  expect(await latestIndexBucketBefore(env.store, 'candles_1m', 'bitcoin', T)).toBe(0);
  expect(await latestIndexBucketBefore(env.store, 'candles_1m', 'ethereum', T + 10 * minute)).toBe(T + 5 * minute);
});
