import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Currency } from '../../infra/currency/currencies.ts';
import type { IndexInputs, StatusRow } from '../indexInputs.ts';
import { defaultIndexParams, indexParamsSchema, staleLookbackMs, type IndexParams } from '../indexPrice.ts';
import type { QuoteRates } from '../indexQuoteRate.ts';
import { sweepIndex, tickContent, tickKey, type IndexState, type TickRow } from '../indexSweep.ts';
import { expectTicks, relClose, type StoredTick } from './indexCheck.ts';
import { referenceTicks, type RawTrade, type ReferenceOptions } from './indexReference.ts';

// The pure sweep on plain arrays, against the independent recomputation from raw trades
// (indexReference.ts): no store. The inputs are built from the trades as the queries of
// indexInputs.ts read them from the candles and per-market seconds the store rolls them into.

const asset = 'sweepcoin';
const epochS = Date.UTC(2026, 2, 1) / 1000;

interface Book { venue: string; market: string; ts: number; crossed: boolean }
interface Status { venue: string; market: string; ts: number; connected: boolean }

/** The trade that sorts last, by time then id (the store's argMax key). */
const lastOf = (trades: readonly RawTrade[]) => trades.reduce((a, b) => (b.ts > a.ts || (b.ts === a.ts && b.trade_id > a.trade_id) ? b : a));

function groupBy<T>(items: readonly T[], key: (item: T) => string): T[][] {
  return [...Map.groupBy(items, key).values()];
}

/** What loadIndexInputs would read for `range` once these trades, books and statuses are stored. */
function inputsFor(trades: readonly RawTrade[], books: readonly Book[], statuses: readonly Status[], range: { from: number; to: number }, params: IndexParams, perpetualVenues: ReadonlySet<string>): IndexInputs {
  const { from, to } = range;
  const firstMinute = Math.floor(from / 60) * 60;
  const lastMinute = Math.floor(to / 60) * 60;
  const volumeWindowS = params.volumeWindowMinutes * 60;
  const intervalWindowS = params.intervalWindowMinutes * 60;
  const lookbackS = Math.ceil(staleLookbackMs(params) / 1000);
  const marketOf = (r: { asset: string; venue: string; market: string; quote: string }) => ({ asset: r.asset, venue: r.venue, market: r.market, quote: r.quote });
  const sum = (list: readonly RawTrade[], f: (t: RawTrade) => number) => list.reduce((acc, t) => acc + f(t), 0);
  const minuteOf = (t: RawTrade) => Math.floor(t.ts / 60_000) * 60;
  const secondOf = (t: RawTrade) => Math.floor(t.ts / 1000);
  const byMarket = (list: readonly RawTrade[]) => groupBy(list, (t) => `${t.venue}:${t.market}`);

  const candles = groupBy(trades, (t) => `${t.venue}:${t.market}:${minuteOf(t)}`).map((list) => ({
    ...marketOf(list[0]!),
    bucket: minuteOf(list[0]!),
    notional: sum(list, (t) => t.price * t.quantity),
    trades: list.length,
    close: lastOf(list).price,
  }));
  const windowed = candles.filter((c) => c.bucket >= firstMinute - Math.max(volumeWindowS, intervalWindowS) && c.bucket < firstMinute);
  const windows = groupBy(windowed, (c) => `${c.venue}:${c.market}`)
    .map((list) => {
      const inVolume = list.filter((c) => c.bucket >= firstMinute - volumeWindowS);
      const latest = inVolume.reduce<(typeof list)[number] | undefined>((a, c) => (a === undefined || c.bucket > a.bucket ? c : a), undefined);
      return {
        ...marketOf(list[0]!),
        windowNotional: inVolume.reduce((acc, c) => acc + c.notional, 0),
        windowTrades: inVolume.reduce((acc, c) => acc + c.trades, 0),
        intervalTrades: list.filter((c) => c.bucket >= firstMinute - intervalWindowS).reduce((acc, c) => acc + c.trades, 0),
        close: latest?.close ?? 0,
      };
    })
    .filter((w) => w.windowTrades > 0 || w.intervalTrades > 0);
  const within = (b: number, shift: number) => b >= firstMinute - shift && b < lastMinute - shift;
  const buckets = candles.filter((c) => within(c.bucket, 0) || within(c.bucket, volumeWindowS) || within(c.bucket, intervalWindowS));
  const lastTrades = byMarket(trades.filter((t) => secondOf(t) >= from - lookbackS && secondOf(t) < from)).map((list) => ({
    ...marketOf(list[0]!),
    price: lastOf(list).price,
    lastTradeAt: Math.max(...list.map((t) => t.ts)),
  }));
  const seconds = groupBy(trades.filter((t) => secondOf(t) >= firstMinute && secondOf(t) <= to), (t) => `${t.venue}:${t.market}:${secondOf(t)}`)
    .map((list) => ({
      ...marketOf(list[0]!),
      second: secondOf(list[0]!),
      notional: sum(list, (t) => t.price * t.quantity),
      volume: sum(list, (t) => t.quantity),
      trades: list.length,
      price: lastOf(list).price,
      lastTradeAt: Math.max(...list.map((t) => t.ts)),
    }))
    .sort((a, b) => a.second - b.second);
  const statusBefore = groupBy(statuses.filter((s) => s.ts < from * 1000), (s) => `${s.venue}:${s.market}`).map((list) => {
    const latest = list.reduce((a, s) => (s.ts > a.ts ? s : a));
    return { asset, venue: latest.venue, market: latest.market, connected: latest.connected };
  });
  const statusChanges: StatusRow[] = statuses
    .filter((s) => s.ts >= from * 1000 && s.ts < (to + 1) * 1000)
    .sort((a, b) => a.ts - b.ts)
    .map((s) => ({ asset, venue: s.venue, market: s.market, connected: s.connected, at: s.ts }));
  return {
    windows,
    buckets,
    lastTrades,
    seconds,
    books: books.filter((b) => b.ts >= from * 1000 - params.crossedBookMaxAgeMs).map((b) => ({ asset, ...b })),
    statusBefore,
    statusChanges,
    perpetualVenues,
  };
}

/** The rows as index_ticks holds them after these inserts in order: per asset and second, the last one written. */
function stored(...inserts: readonly TickRow[][]): StoredTick[] {
  const latest = new Map(inserts.flat().map((r) => [tickKey(r), r]));
  return [...latest.values()]
    .sort((a, b) => a.second - b.second)
    .map((r) => ({
      second: r.second,
      price: r.price,
      status: r.status,
      constituents: [...r.constituents].sort(),
      excluded: r.excluded,
      volume: r.volume,
      volumeUsd: r.volume_usd,
      tradeCount: r.trade_count,
      lastTradeAt: r.last_trade_at,
    }));
}

const shortWindows = indexParamsSchema.parse({
  volumeWindowMinutes: 3,
  intervalWindowMinutes: 2,
  staleMinMs: 5_000,
  staleMaxMs: 40_000,
  staleIntervals: 5,
  outlierThreshold: 0.02,
  minShare: 0.05,
});

// Spot venues s0..s3, a perpetual one; s4 trades every 2 s at first (its mean interval sets when it
// goes stale, between the floor and the ceiling), then stops.
const venues = ['s0', 's1', 's2', 's3', 'perp', 's4'];
const perpetualVenues = new Set(['perp']);
const quotes = ['USD', 'USDT', 'EUR', 'GBP'];
/** USD per quote unit: USDT measured below par, EUR through FX, GBP without a rate (no_usd_rate). */
const usdPer = (quote: string) => ({ USD: 1, USDT: 0.999, EUR: 1 / 0.9 })[quote];
const rates: QuoteRates = {
  stablecoins: { tether: { usdPer: 0.999, source: 'measured:test' }, 'usd-coin': { usdPer: 1, source: 'par' } },
  fiat: { perUsd: (c: Currency) => (c === 'eur' ? 0.9 : c === 'usd' ? 1 : undefined), source: () => 'test' },
};
const marketName = (quote: string) => `SWP${quote}`;

describe('sweepIndex', () => {
  it('matches the recomputation from raw trades, with perpetual, stale, crossed, disconnected and unrated markets, in one sweep or two', () => {
    const seen = new Set<string>();
    const scenario = fc.record({
      params: fc.constantFrom<IndexParams>(defaultIndexParams, shortWindows),
      includePerpetuals: fc.boolean(),
      biases: fc.tuple(...venues.map(() => fc.constantFrom(0, 0.012, -0.016, 0.028, 0.06))),
      trades: fc.array(
        fc.record({
          venue: fc.integer({ min: 0, max: 4 }),
          quote: fc.integer({ min: 0, max: 3 }),
          // Sparse minutes anywhere, and dense ones: many trades in a few milliseconds of minutes 2 and 7,
          // some in the same millisecond (ordered by trade id), some on a minute's first or last.
          offsetMs: fc.oneof(
            fc.integer({ min: 0, max: 599_999 }),
            fc.integer({ min: 119_990, max: 120_010 }),
            fc.integer({ min: 419_997, max: 420_003 }),
          ),
          noise: fc.double({ min: -0.004, max: 0.004, noNaN: true }),
          quantity: fc.double({ min: 0.01, max: 5, noNaN: true }),
          late: fc.boolean(),
        }),
        { minLength: 1, maxLength: 120 },
      ),
      staleTrades: fc.integer({ min: 1, max: 40 }),
      books: fc.uniqueArray(fc.record({ venue: fc.integer({ min: 0, max: 3 }), offsetMs: fc.integer({ min: 0, max: 599_999 }), crossed: fc.boolean() }), {
        minLength: 1,
        maxLength: 3,
        selector: (b) => b.venue,
      }),
      statuses: fc.uniqueArray(fc.record({ venue: fc.integer({ min: 0, max: 3 }), offsetMs: fc.integer({ min: 0, max: 599_999 }), connected: fc.boolean() }), {
        minLength: 1,
        maxLength: 6,
        selector: (s) => s.offsetMs,
      }),
      fromS: fc.integer({ min: 0, max: 200 }),
      cutS: fc.integer({ min: 0, max: 400 }),
    });
    fc.assert(
      fc.property(scenario, (sc) => {
        const params = { ...sc.params, includePerpetuals: sc.includePerpetuals };
        const epoch = epochS * 1000;
        // Each market numbers its own trades, so ids collide across markets; numbering out of time
        // order, and unpadded ('10' sorts before '9'), as the store's (ts, trade_id) order does.
        const nextId = new Map<string, number>();
        const idFor = (key: string) => {
          const n = nextId.get(key) ?? 0;
          nextId.set(key, n + 1);
          return String(n);
        };
        const trades: RawTrade[] = sc.trades.map((t) => ({
          venue: venues[t.venue]!,
          market: marketName(quotes[t.quote]!),
          asset,
          quote: quotes[t.quote]!,
          trade_id: idFor(`${t.venue}:${t.quote}`),
          ts: epoch + t.offsetMs,
          price: 100 * (1 + sc.biases[t.venue]!) * (1 + t.noise),
          quantity: t.quantity,
        }));
        for (let i = 0; i < sc.staleTrades; i++) {
          trades.push({ venue: 's4', market: marketName('USD'), asset, quote: 'USD', trade_id: `s4-${i}`, ts: epoch + i * 2_000, price: 100, quantity: 50 });
        }
        // Books and statuses on the USD market of a spot venue; at most one book per market (market_quality keeps the latest).
        const books = sc.books.map((b) => ({ venue: venues[b.venue]!, market: marketName('USD'), ts: epoch + b.offsetMs, crossed: b.crossed }));
        const statuses = sc.statuses.map((s) => ({ venue: venues[s.venue]!, market: marketName('USD'), ts: epoch + s.offsetMs, connected: s.connected }));

        const from = epochS + sc.fromS;
        const to = epochS + 640;
        const options: ReferenceOptions = {
          params,
          usdPer,
          perpetualVenues,
          crossed: (key, s) => books.some((b) => b.crossed && `${b.venue}:${b.market}` === key && Math.abs(b.ts - (s + 1) * 1000) <= params.crossedBookMaxAgeMs),
          statuses: statuses.map((s) => ({ key: `${s.venue}:${s.market}`, ts: s.ts, connected: s.connected })),
        };
        const expected = referenceTicks(trades, asset, from, to, options);
        for (const t of expected) for (const reason of Object.values(t.excluded)) seen.add(reason);

        const sweep = (range: { from: number; to: number }, prior: IndexState, written: ReadonlyMap<string, string>, computedAt: number, available = trades) =>
          sweepIndex({
            range: { ...range, keepFrom: range.to - 10 },
            inputs: inputsFor(available, books, statuses, range, params, perpetualVenues),
            prior,
            params,
            rates,
            writes: { storedThrough: -1, written },
            computedAt,
          });

        // One sweep over the whole range.
        const whole = sweep({ from, to }, new Map(), new Map(), 1);
        expectTicks(stored(whole.rows), expected, from, to);
        const last = expected.at(-1);
        if (last?.second === to) {
          relClose(whole.states.get(to)!.get(asset)!.price, last.price, 'state price');
          expect(whole.constituents.map((c) => [`${c.venue}:${c.market}`, c.reason || null, c.ts])).toEqual(last.markets.map((m) => [m.key, m.reason, (to + 1) * 1000]));
          whole.constituents.forEach((c, i) => relClose(c.weight, last.markets[i]!.weight, `${c.venue}:${c.market} weight`));
        } else {
          expect(whole.states.get(to)!.has(asset)).toBe(false);
        }

        // Two sweeps, the second starting again 10 seconds back from the state the first kept (as the runner
        // steps); the late trades of those 10 seconds are stored only after the first.
        const cut = Math.min(to, from + sc.cutS);
        const again = cut - 9;
        const onTime = trades.filter((t, i) => !(sc.trades[i]?.late && Math.floor(t.ts / 1000) >= again));
        const first = sweep({ from, to: cut }, new Map(), new Map(), 1, onTime);
        if (again > from) {
          const second = sweep({ from: again, to }, first.states.get(again - 1)!, first.written, 2);
          expectTicks(stored(first.rows, second.rows), expected, from, to);
        }
      }),
      { numRuns: 150, seed: Number(process.env.MDS_TEST_SEED ?? Date.now() % 2 ** 31), endOnFailure: true },
    );
    // Every rule fired somewhere in the run (perpetual only when perpetuals were left out).
    expect([...seen].sort()).toEqual(expect.arrayContaining(['crossed_book', 'disconnected', 'no_usd_rate', 'outlier', 'perpetual', 'stale']));
  });
});

describe('sweepIndex on a hand-made range: which rows are written', () => {
  // Minute-aligned + 10 s, so the 5 seconds stay in one minute and no candle enters a window.
  const F = epochS + 10;
  const quoted = (venue: string, quote = 'USD') => ({ asset, venue, market: `X${quote}`, quote });
  const inputs: IndexInputs = {
    windows: [
      { ...quoted('a'), windowNotional: 1_000, windowTrades: 10, intervalTrades: 10, close: 100 },
      { ...quoted('b'), windowNotional: 1_000, windowTrades: 10, intervalTrades: 10, close: 102 },
      // No USD rate for ZZZ: a candidate, excluded.
      { ...quoted('c', 'ZZZ'), windowNotional: 1_000, windowTrades: 10, intervalTrades: 10, close: 7 },
    ],
    buckets: [],
    lastTrades: [
      { ...quoted('a'), price: 100, lastTradeAt: F * 1000 - 1_000 },
      { ...quoted('b'), price: 102, lastTradeAt: F * 1000 - 2_000 },
      { ...quoted('c', 'ZZZ'), price: 7, lastTradeAt: F * 1000 - 1_000 },
    ],
    seconds: [],
    books: [],
    statusBefore: [],
    statusChanges: [],
    perpetualVenues: new Set(),
  };
  // An asset published before the range that has no market in it any more.
  const prior: IndexState = new Map([['gone', { price: 5, lastTradeAt: F * 1000 - 5_000, outliers: new Set<string>(), content: 'gone' }]]);
  const sweep = (writes: { storedThrough: number; written: ReadonlyMap<string, string> }) =>
    sweepIndex({ range: { from: F, to: F + 4, keepFrom: F + 2 }, inputs, prior, params: defaultIndexParams, rates, writes, computedAt: 9 });
  // Equal window values at 100 and 102 USD; the last trade behind the price is a's.
  const row = (second: number): TickRow => ({
    asset, second, price: 101, status: 'ok', constituents: ['a:XUSD', 'b:XUSD'], excluded: { 'c:XZZZ': 'no_usd_rate' },
    volume: 0, volume_usd: 0, trade_count: 0, last_trade_at: F * 1000 - 1_000, computed_at: 9,
  });
  const none = (second: number): TickRow => ({
    asset: 'gone', second, price: 0, status: 'none', constituents: [], excluded: {}, volume: 0, volume_usd: 0, trade_count: 0, last_trade_at: 0, computed_at: 9,
  });

  it('writes the first second and a lost price once; keeps the states from keepFrom; the verdicts at `to`', () => {
    const r = sweep({ storedThrough: -1, written: new Map() });
    expect(r.rows).toEqual([none(F), row(F)]);
    expect([...r.written.keys()]).toEqual([tickKey(none(F)), tickKey(row(F))]);
    expect(r.assets).toBe(1);
    expect([...r.states.keys()]).toEqual([F + 2, F + 3, F + 4]);
    for (const state of r.states.values()) {
      expect([...state.keys()]).toEqual([asset]);
      expect(state.get(asset)).toMatchObject({ price: 101, lastTradeAt: F * 1000 - 1_000 });
    }
    const ts = (F + 5) * 1000;
    expect(r.constituents).toEqual([
      { asset, venue: 'a', market: 'XUSD', quote: 'USD', price_usd: 100, volume_24h_usd: 1_000, weight: 0.5, excluded: false, reason: '', ts },
      { asset, venue: 'b', market: 'XUSD', quote: 'USD', price_usd: 102, volume_24h_usd: 1_000, weight: 0.5, excluded: false, reason: '', ts },
      { asset, venue: 'c', market: 'XZZZ', quote: 'ZZZ', price_usd: null, volume_24h_usd: 0, weight: 0, excluded: true, reason: 'no_usd_rate', ts },
    ]);
  });

  it('rewrites every second up to storedThrough and each second an earlier run stored, except rows it wrote identically', () => {
    const first = sweep({ storedThrough: -1, written: new Map() });
    // F + 1 holds the row this runner wrote with the same content; F + 3 a row of an earlier computation.
    const written = new Map([
      [tickKey({ asset, second: F + 1 }), first.written.get(tickKey(row(F)))!],
      [tickKey({ asset, second: F + 3 }), ''],
    ]);
    const r = sweep({ storedThrough: F + 2, written });
    // Assets in assetOrder within a second.
    expect(r.rows).toEqual([none(F), row(F), none(F + 1), none(F + 2), row(F + 2), row(F + 3)]);
  });

  it('tickContent does not depend on the order of the exclusions', () => {
    const base = { price: 1, status: 'ok', constituents: [], last_trade_at: 2 };
    expect(tickContent({ ...base, excluded: { 'b:X': 'stale', 'a:X': 'outlier', 'c:X': 'perpetual' } })).toBe(
      tickContent({ ...base, excluded: { 'a:X': 'outlier', 'b:X': 'stale', 'c:X': 'perpetual' } }),
    );
  });
});
