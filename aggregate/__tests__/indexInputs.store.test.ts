import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { countingQueries, openTestStore, trade } from '../../test/support/harness.ts';
import type { Store } from '../../infra/store.ts';
import { indexParamsSchema } from '../indexPrice.ts';
import { LiveInputs, loadIndexInputs, loadIndexState, loadNextTradeSecond, loadStoredSeconds, loadStoredThrough } from '../indexInputs.ts';
import { tickContent, type IndexInputs, type TickRow } from '../indexSweep.ts';

// The index engine's reads on the real store, one look-back edge at a time: a row just inside
// each window is read, the one just outside is not. The runner tests (indexRunner*.test.ts)
// check the same reads end to end, where an edge one window wide rarely decides a tick.

let env: Awaited<ReturnType<typeof openTestStore>>;
let store: Store;
beforeAll(async () => {
  env = await openTestStore();
  store = env.store;
});
afterAll(async () => {
  await env?.dispose();
});
// Each test reads only the rows it inserted (loadStoredThrough and loadNextTradeSecond read whole tables).
beforeEach(async () => {
  for (const table of ['trades', 'market_seconds', 'candles_1m', 'market_quality', 'market_connections', 'index_ticks', 'index_ticks_by_time', 'index_summary_10m', 'index_constituents_latest'])
    await store.client.command({ query: `TRUNCATE TABLE ${table}` });
});

// Stale look-back max(5 s, 40 s) = 40 s; a crossed book counts for 60 s; index state look-back 3 min + 40 s + 1 min = 280 s.
const params = indexParamsSchema.parse({ volumeWindowMinutes: 3, intervalWindowMinutes: 2, staleMinMs: 5_000, staleMaxMs: 40_000, crossedBookMaxAgeMs: 60_000 });
const asset = 'edgecoin';
/** Not on a minute: the range's first minute starts 30 s earlier. */
const from = Date.parse('2026-03-02T12:00:30Z') / 1000;

/** An index_ticks row of `asset` at `second`, as the runner writes it. */
const tick = (fields: Partial<TickRow> & Pick<TickRow, 'asset' | 'second'>): TickRow => ({
  price: 100, status: 'ok', constituents: ['a:EDGEUSD'], excluded: {},
  volume: 1, volume_usd: 100, trade_count: 1, last_trade_at: fields.second * 1000, computed_at: from * 1000, ...fields,
});

describe('loadIndexInputs', () => {
  it('reads last trades within the stale look-back, crossed books within the crossed-book age, statuses up to the end of the last second', async () => {
    const to = from + 10;
    const tradeAt = (venue: string, ms: number) => trade({ venue, market: 'EDGEUSD', asset, quote: 'USD', trade_id: `${venue}${ms}`, ts: ms, price: 100, quantity: 1 });
    await store.insert('trades', [tradeAt('in', (from - 40) * 1000 + 500), tradeAt('out', (from - 41) * 1000 + 500)]);
    const book = (venue: string, ts: number, spreadBps = -1) => ({
      asset, venue, market: 'EDGEUSD', quote: 'USD', ts, spread_bps: spreadBps, depth_bid_2: 0, depth_ask_2: 0, depth_bid_1: 0, depth_ask_1: 0, cost_buy: {}, cost_sell: {},
    });
    // 'uncrossed': crossed, then a later book that is not: its latest book is not crossed.
    await store.insert('market_quality', [book('in', from * 1000 - 60_000), book('out', from * 1000 - 60_001), book('uncrossed', from * 1000 - 30_000), book('uncrossed', from * 1000 - 20_000, 3)]);
    const status = (venue: string, ts: number, connected = false) => ({ asset, venue, market: 'EDGEUSD', quote: 'USD', ts, received_at: ts, connected });
    await store.insert('market_connections', [
      status('before', from * 1000 - 1),
      // Disconnected, then connected again before the range: not disconnected at its start.
      status('back', from * 1000 - 5_000),
      status('back', from * 1000 - 4_000, true),
      status('first', from * 1000),
      status('last', (to + 1) * 1000 - 1),
      status('after', (to + 1) * 1000),
    ]);

    const inputs = await loadIndexInputs(store, { from, to, keepAt: from }, params);
    expect(inputs.lastTrades.map((r) => [r.venue, r.lastTradeAt])).toEqual([['in', (from - 40) * 1000 + 500]]);
    expect(inputs.crossedBooks.map((r) => [r.venue, r.ts])).toEqual([['in', from * 1000 - 60_000]]);
    expect(inputs.disconnectedBefore.map((r) => r.venue)).toEqual(['before']);
    expect(inputs.statusChanges.map((r) => [r.venue, r.at])).toEqual([['first', from * 1000], ['last', (to + 1) * 1000 - 1]]);
  });

  it('reads the 1m candles that enter or leave the windows as a range passes a minute; within one minute none, and candles_1m is not asked', async () => {
    // Windows of 3 (volume) and 2 (interval) minutes. A range from 12:00:30 to 12:01:10 passes 12:01:
    // the 12:00 candle enters both windows, 11:57 leaves the volume window, 11:58 the interval window.
    const minute = (hhmm: string) => Date.parse(`2026-03-02T${hhmm}:00Z`) / 1000;
    const tradeIn = (hhmm: string) => trade({ venue: 'v', market: 'EDGEUSD', asset, quote: 'USD', trade_id: hhmm, ts: (minute(hhmm) + 10) * 1000, price: 100, quantity: 1 });
    await store.insert('trades', ['11:56', '11:57', '11:58', '11:59', '12:00', '12:01'].map(tradeIn));
    const candleQueries = countingQueries(store, (query) => query.includes('FROM candles_1m'));

    const across = await loadIndexInputs(candleQueries.store, { from, to: from + 40, keepAt: from }, params);
    expect(across.buckets.map((b) => b.bucket).sort()).toEqual([minute('11:57'), minute('11:58'), minute('12:00')]);
    // The windows before the range's first minute, and the candles entering and leaving them.
    expect(candleQueries.count()).toBe(2);

    const within = await loadIndexInputs(candleQueries.store, { from, to: from + 29, keepAt: from }, params);
    expect(within.buckets).toEqual([]);
    expect(candleQueries.count()).toBe(3);
  });
});

describe('LiveInputs', () => {
  /** `inputs`' windows, last trades and seconds in one order, each row's floats rounded to 9 significant digits (a rolled sum may differ in its last bits). */
  const comparable = (inputs: Pick<IndexInputs, 'windows' | 'lastTrades' | 'seconds'>) => {
    const rounded = (row: object) => Object.fromEntries(Object.entries(row).map(([k, v]) => [k, typeof v === 'number' ? Number(v.toPrecision(9)) : v]));
    const sorted = (rows: object[]) => rows.map(rounded).sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));
    // The live path's last trades carry the look-back's count as well (MinuteLastTradeRow): not an input of the sweep.
    const lastTrades = inputs.lastTrades.map(({ asset, venue, market, quote, price, lastTradeAt }) => ({ asset, venue, market, quote, price, lastTradeAt }));
    return { windows: sorted(inputs.windows), lastTrades: sorted(lastTrades), seconds: sorted(inputs.seconds) };
  };

  it('rolls the windows and the last trades to the next minute as the live steps pass it, equal to reading them whole; a late trade makes them read again', async () => {
    // Windows of 3 and 2 minutes and a look-back of 40 s (params). From 11:58 on: x trades every
    // 7 s; y in the minutes 12:00 and 12:03 only (its candles enter and leave both windows); z
    // once, at 12:01:05 (it leaves the look-back, then the windows).
    const start = Date.parse('2026-03-02T11:58:00Z') / 1000;
    const tradeAt = (venue: string, second: number, i: number) =>
      trade({ venue, market: 'EDGEUSD', asset, quote: 'USD', trade_id: `${venue}${second}`, ts: second * 1000 + 300, price: 100 + (i % 13) * 0.37, quantity: 0.1 + (i % 7) * 0.213 });
    const rows = [];
    for (let s = start, i = 0; s < start + 540; s += 7, i++) rows.push(tradeAt('x', s, i));
    for (const minute of [120, 300]) for (let s = start + minute + 3, i = 0; s < start + minute + 60; s += 11, i++) rows.push(tradeAt('y', s, i));
    rows.push(tradeAt('z', start + 185, 0));
    await store.insert('trades', rows);

    // Live steps every 9 s, each computing the 10 s before its last second again, from 12:00:40 on.
    const live = new LiveInputs();
    const walk = async (fromS: number, toS: number) => {
      for (let to = fromS; to <= toS; to += 9) {
        const range = { from: to - 10, to, keepAt: to - 10 };
        const [kept, whole] = [await loadIndexInputs(store, range, params, [], live), await loadIndexInputs(store, range, params)];
        expect(comparable(kept), `the live inputs of ${to - start} s`).toEqual(comparable(whole));
      }
    };
    await walk(start + 160, start + 376);
    // The first step read them; the minutes 12:01 to 12:04 rolled in turn, the other steps kept them.
    expect(live.reads.windows).toMatchObject({ read: 1, rolled: 4 });
    expect(live.reads.lastTrades).toMatchObject({ read: 1, rolled: 4 });

    // A trade of 12:03:50 stored late, in the minute 12:04: the windows and the look-back before it
    // no longer match the store's counts, and are read whole; the minute 12:05 rolls again.
    await store.insert('trades', [tradeAt('x', start + 350, 99)]);
    await walk(start + 385, start + 433);
    expect(live.reads.windows).toMatchObject({ read: 2, rolled: 5 });
    expect(live.reads.lastTrades).toMatchObject({ read: 2, rolled: 5 });
  });
});

describe('loadIndexState', () => {
  it('resumes from the latest row within the look-back, skips an asset whose price ended, keeps only outliers in memory', async () => {
    const second = from;
    // The look-back: a row is written at least once per volume window (3 minutes here), and a minute more.
    const inside = tick({ asset: 'inside', second: second - 239, price: 101, constituents: ['c:EDGEUSD'], excluded: { 'a:EDGEUSD': 'outlier', 'b:EDGEUSD': 'stale' } });
    await store.insert('index_ticks', [
      tick({ asset: 'inside', second: second - 240, price: 99 }),
      inside,
      tick({ asset: 'inside', second: second + 1, price: 102 }),
      tick({ asset: 'outside', second: second - 240 }),
      tick({ asset: 'ended', second: second - 10 }),
      tick({ asset: 'ended', second: second - 5, status: 'none' }),
    ]);

    const state = await loadIndexState(store, second, params);
    expect([...state.keys()]).toEqual(['inside']);
    expect(state.get('inside')).toEqual({ price: 101, lastTradeAt: inside.last_trade_at, outliers: new Set(['a:EDGEUSD']), content: tickContent(inside), writtenAt: second - 239 });
  });
});

describe('loadStoredThrough', () => {
  it('is undefined on an empty store, else the newest second of index_ticks or of the constituents judged, and the newest computed_at', async () => {
    expect(await loadStoredThrough(store)).toBeUndefined();
    await store.insert('index_ticks', [tick({ asset, second: from, computed_at: from * 1000 + 700 }), tick({ asset, second: from - 3, computed_at: from * 1000 + 900 })]);
    expect(await loadStoredThrough(store)).toMatchObject({ latest: from, computedAt: from * 1000 + 900 });
    // index_constituents_latest is stamped with the end of the second judged.
    await store.insert('index_constituents_latest', [
      { asset, venue: 'a', market: 'EDGEUSD', quote: 'USD', price_usd: 100, volume_24h_usd: 1, weight: 1, excluded: false, reason: '', ts: (from + 5) * 1000 },
    ]);
    expect(await loadStoredThrough(store)).toMatchObject({ latest: from + 4, computedAt: from * 1000 + 900 });
  });
});

describe('loadNextTradeSecond', () => {
  it('finds the first second with a trade at or after `from` (a negative `from` reads from 0), else a far-future sentinel', async () => {
    const tradeIn = (second: number) => trade({ venue: 'a', market: 'EDGEUSD', asset, quote: 'USD', trade_id: `t${second}`, ts: second * 1000 + 250, price: 100, quantity: 1 });
    await store.insert('trades', [tradeIn(from + 100), tradeIn(from + 200)]);
    expect(await loadNextTradeSecond(store, -5)).toBe(from + 100);
    expect(await loadNextTradeSecond(store, from + 100)).toBe(from + 100);
    expect(await loadNextTradeSecond(store, from + 101)).toBe(from + 200);
    expect(await loadNextTradeSecond(store, from + 201)).toBe(Number.MAX_SAFE_INTEGER);
  });
});

describe('loadStoredSeconds', () => {
  it('lists the seconds from..to holding a row, per asset', async () => {
    await store.insert('index_ticks', [
      tick({ asset: 'a', second: from - 1 }),
      tick({ asset: 'a', second: from }),
      tick({ asset: 'a', second: from + 2 }),
      tick({ asset: 'b', second: from + 3 }),
      tick({ asset: 'b', second: from + 4 }),
    ]);
    const stored = await loadStoredSeconds(store, from, from + 3);
    expect(stored.map((r) => `${r.asset}@${r.second - from}`).sort()).toEqual(['a@0', 'a@2', 'b@3']);
  });
});
