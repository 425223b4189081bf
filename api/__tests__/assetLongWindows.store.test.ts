// The asset market's hourly and daily windows read once an hour (api/read/assetLongWindows.ts):
// with the cache, a snapshot equals the one read whole while its trades are in the live buckets (the
// current hour and the one before, today and yesterday); an older trade shows at the next hour; a
// later call of the hour reads only the live part, and the long windows only of assets not read
// yet. Expected figures are worked out here from the trades written.
import { afterAll, beforeAll, expect, test } from 'vitest';
import { countingQueries, openTestStore, trade } from '../../test/support/harness.ts';
import type { Store } from '../../infra/store.ts';
import { loadAssetMarketRows, type AssetMarketRow } from '../read/assetMarket.ts';
import { LongWindowCache, longWindowAssetsPerQuery } from '../read/assetLongWindows.ts';

let env: Awaited<ReturnType<typeof openTestStore>>;
let store: Store;
beforeAll(async () => {
  env = await openTestStore();
  store = env.store;
});
afterAll(async () => {
  await env?.dispose();
});

const minute = 60_000;
const hour = 60 * minute;
const day = 24 * hour;
// 10:30:17 UTC: the live hourly buckets are those of 09:00 and 10:00.
const T = Date.UTC(2026, 5, 15, 10, 30, 17, 250);
let seq = 0;
const at = (asset: string, ts: number, price: number, quantity = 1) =>
  trade({ venue: 'coinbase', market: `${asset}-USD`, asset, quote: 'USD', trade_id: `w${seq++}`, ts, price, quantity });

/** Per asset, the figures this test checks: the 7 d range and reference, the 1 y high and reference. */
function figures(rows: AssetMarketRow[]) {
  return Object.fromEntries(rows.map((r) => [r.asset, { high7d: r.high7d, low7d: r.low7d, ref7d: r.ref7d, high1y: r.high1y, ref1y: r.ref1y }]));
}

/** The figures of `assets` at `now`, read whole (no cache). */
async function read(assets: string[], now: number) {
  return figures(await loadAssetMarketRows(store, assets, now));
}

test('read once an hour: the same as read whole for live trades, an older trade at the next hour, only new assets read again', async () => {
  const hourStart = (ts: number) => Math.floor(ts / hour) * hour;
  const dayStart = (ts: number) => Math.floor(ts / day) * day;
  await store.insert('trades', [
    // The 7 d reference: the hour of 8 days ago, two trades (VWAP (10 + 3 x 14) / 4 = 13).
    at('bitcoin', T - 8 * day, 10),
    at('bitcoin', T - 8 * day + minute, 14, 3),
    // The 1 y reference: the day of 370 days ago.
    at('bitcoin', T - 370 * day, 5),
    at('bitcoin', T - 3 * hour, 100),
    at('bitcoin', T - 10 * minute, 90),
  ]);
  const whole = await read(['bitcoin'], T);
  expect(whole.bitcoin).toEqual({
    high7d: 100,
    low7d: 90,
    ref7d: [13, hourStart(T - 8 * day) / 1000],
    high1y: 100,
    ref1y: [5, dayStart(T - 370 * day) / 1000],
  });
  const cache = new LongWindowCache();
  const counted = countingQueries(store);
  const countedRead = async (assets: string[], now: number) => {
    const before = counted.count();
    const rows = await loadAssetMarketRows(counted.store, assets, now, cache);
    return { rows: figures(rows), queries: counted.count() - before };
  };
  // The hour's first call reads both parts; a later one only the live part.
  expect(await countedRead(['bitcoin'], T)).toEqual({ rows: whole, queries: 2 });
  expect(await countedRead(['bitcoin'], T + 20 * minute)).toEqual({ rows: whole, queries: 1 });

  // A trade in the live hour shows at once; one older than the live buckets (a repaired gap) shows read whole...
  await store.insert('trades', [at('bitcoin', T + 5 * minute, 400), at('bitcoin', T - 4 * hour, 500, 0.5), at('bitcoin', T - 5 * hour, 1)]);
  expect((await read(['bitcoin'], T + 20 * minute)).bitcoin).toMatchObject({ high7d: 500, low7d: 1, high1y: 500 });
  // ...with the cache only from the next hour on (the daily live buckets take it at once: today's).
  expect((await countedRead(['bitcoin'], T + 25 * minute)).rows.bitcoin).toMatchObject({ high7d: 400, low7d: 90, high1y: 500 });
  const nextHour = await countedRead(['bitcoin'], T + 40 * minute);
  expect(nextHour).toMatchObject({ queries: 2, rows: { bitcoin: { high7d: 500, low7d: 1 } } });
  expect(nextHour.rows).toEqual(await read(['bitcoin'], T + 40 * minute));

  // An asset the cache has not read: its long windows alone are read, and equal those read whole.
  await store.insert('trades', [at('ethereum', T - 9 * day, 3), at('ethereum', T - 6 * hour, 7), at('ethereum', T + 30 * minute, 6)]);
  const withNew = await countedRead(['bitcoin', 'ethereum'], T + 45 * minute);
  expect(withNew.queries).toBe(2);
  expect(withNew.rows.ethereum).toEqual({ high7d: 7, low7d: 6, ref7d: [3, hourStart(T - 9 * day) / 1000], high1y: 7, ref1y: [3, dayStart(T - 9 * day) / 1000] });
  expect(withNew.rows).toEqual(await read(['bitcoin', 'ethereum'], T + 45 * minute));
  expect((await countedRead(['bitcoin', 'ethereum'], T + 50 * minute)).queries).toBe(1);

  // More assets than one query takes: read in parts, each asset in one of them.
  const many = ['bitcoin', ...Array.from({ length: longWindowAssetsPerQuery }, (_, i) => `none-${i}`), 'ethereum'];
  const inParts = await countedRead(many, T + 95 * minute);
  expect(inParts.queries).toBe(1 + 2);
  expect(inParts.rows).toEqual(await read(['bitcoin', 'ethereum'], T + 95 * minute));
});
