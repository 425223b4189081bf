import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Currency } from '../currency/currencies.ts';
import type { IndexInputs, StatusRow } from '../indexSweep.ts';
import { defaultIndexParams, indexParamsSchema, staleLookbackMs, type IndexParams } from '../indexPrice.ts';
import type { QuoteRates } from '../indexQuoteRate.ts';
import { rowRefreshSeconds, sweepIndex, tickContent, tickKey, type IndexState, type IndexVerdicts, type SweepRange, type SweepResult, type TickRow } from '../indexSweep.ts';
import { expectTicks, indexAt, relClose, type StoredTick } from './indexCheck.ts';
import { referenceTicks, type RawTrade, type ReferenceOptions, type ReferenceTick } from './indexReference.ts';

// The pure sweep on plain arrays, against the independent recomputation from raw trades
// (indexReference.ts): no store. The inputs are built from the trades as the queries of
// indexInputs.ts read them from the candles and per-market seconds the store rolls them into.

const asset = 'sweepcoin';
const other = 'othercoin';
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
  const disconnectedBefore = groupBy(statuses.filter((s) => s.ts < from * 1000), (s) => `${s.venue}:${s.market}`)
    .map((list) => {
      const latest = list.reduce((a, s) => (s.ts > a.ts ? s : a));
      return { asset, venue: latest.venue, market: latest.market, connected: latest.connected };
    })
    .filter((s) => !s.connected);
  const statusChanges: StatusRow[] = statuses
    .filter((s) => s.ts >= from * 1000 && s.ts < (to + 1) * 1000)
    .sort((a, b) => a.ts - b.ts)
    .map((s) => ({ asset, venue: s.venue, market: s.market, connected: s.connected, at: s.ts }));
  return {
    windows,
    buckets,
    lastTrades,
    seconds,
    crossedBooks: books.filter((b) => b.ts >= from * 1000 - params.crossedBookMaxAgeMs && b.crossed).map((b) => ({ asset, ...b })),
    disconnectedBefore,
    statusChanges,
    perpetualVenues,
  };
}

/** stored() of one asset's rows. */
function storedOf(of: string, ...inserts: readonly TickRow[][]): StoredTick[] {
  return stored(...inserts.map((rows) => rows.filter((r) => r.asset === of)));
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

/** The reference's options for these books and statuses: the spec's crossed_book and disconnected rules, on the rates above. */
function referenceOptions(params: IndexParams, books: readonly Book[], statuses: readonly Status[]): ReferenceOptions {
  return {
    params,
    usdPer,
    perpetualVenues,
    crossed: (key, s) => books.some((b) => b.crossed && `${b.venue}:${b.market}` === key && Math.abs(b.ts - (s + 1) * 1000) <= params.crossedBookMaxAgeMs),
    statuses: statuses.map((s) => ({ key: `${s.venue}:${s.market}`, ts: s.ts, connected: s.connected })),
  };
}

/** sweepIndex as the runner calls it (nothing stored before `written`), on what the store holds once these trades, books and statuses are in. */
function sweepStored(
  trades: readonly RawTrade[],
  books: readonly Book[],
  statuses: readonly Status[],
  range: SweepRange,
  params: IndexParams,
  options: { prior?: IndexState; verdicts?: IndexVerdicts; written?: ReadonlyMap<string, string>; computedAt?: number } = {},
): SweepResult {
  return sweepIndex({
    range,
    inputs: inputsFor(trades, books, statuses, range, params, perpetualVenues),
    prior: options.prior ?? new Map(),
    verdicts: options.verdicts,
    params,
    rates,
    writes: { storedThrough: -1, written: options.written ?? new Map() },
    computedAt: options.computedAt ?? 1,
  });
}

/** The verdicts at `to` (index_constituents_latest) of `of`'s markets are the reference's for its last second, in key order. */
function expectConstituents(result: SweepResult, last: ReferenceTick, to: number, of = asset): void {
  const rows = result.constituents.filter((c) => c.asset === of);
  expect(rows.map((c) => [`${c.venue}:${c.market}`, c.reason || null, c.ts])).toEqual(last.markets.map((m) => [m.key, m.reason, (to + 1) * 1000]));
  rows.forEach((c, i) => relClose(c.weight, last.markets[i]!.weight, `${c.venue}:${c.market} weight`));
}

describe('sweepIndex', () => {
  it('matches the recomputation from raw trades, with perpetual, stale, crossed, disconnected and unrated markets, in one sweep or two, for each of two assets', () => {
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
      // A second asset on its own USD market, trading at other times: a second may change one asset's index and not the other's.
      others: fc.array(
        fc.record({
          venue: fc.integer({ min: 0, max: 3 }),
          offsetMs: fc.integer({ min: 0, max: 599_999 }),
          noise: fc.double({ min: -0.03, max: 0.03, noNaN: true }),
          quantity: fc.double({ min: 0.01, max: 5, noNaN: true }),
        }),
        { maxLength: 40 },
      ),
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
        sc.others.forEach((t, i) => trades.push({ venue: venues[t.venue]!, market: 'OTHUSD', asset: other, quote: 'USD', trade_id: `o${i}`, ts: epoch + t.offsetMs, price: 7 * (1 + t.noise), quantity: t.quantity }));
        // Books and statuses on the USD market of a spot venue; at most one book per market (market_quality keeps the latest).
        const books = sc.books.map((b) => ({ venue: venues[b.venue]!, market: marketName('USD'), ts: epoch + b.offsetMs, crossed: b.crossed }));
        const statuses = sc.statuses.map((s) => ({ venue: venues[s.venue]!, market: marketName('USD'), ts: epoch + s.offsetMs, connected: s.connected }));

        const from = epochS + sc.fromS;
        const to = epochS + 640;
        const expected = referenceTicks(trades, asset, from, to, referenceOptions(params, books, statuses));
        const expectedOther = referenceTicks(trades, other, from, to, referenceOptions(params, books, statuses));
        for (const t of [...expected, ...expectedOther]) for (const reason of Object.values(t.excluded)) seen.add(reason);

        // The state kept 10 seconds before `to` unless told, where the runner's next step starts from.
        const sweep = (range: { from: number; to: number }, prior: IndexState, written: ReadonlyMap<string, string>, computedAt: number, options: { available?: RawTrade[]; keepAt?: number; verdicts?: IndexVerdicts } = {}) =>
          sweepStored(options.available ?? trades, books, statuses, { ...range, keepAt: options.keepAt ?? range.to - 10 }, params, { prior, written, computedAt, verdicts: options.verdicts });

        // One sweep over the whole range, its state at `to` kept.
        const whole = sweep({ from, to }, new Map(), new Map(), 1, { keepAt: to });
        expectTicks(storedOf(asset, whole.rows), expected, from, to);
        expectTicks(storedOf(other, whole.rows), expectedOther, from, to);
        const lastOther = expectedOther.at(-1);
        if (lastOther?.second === to) expectConstituents(whole, lastOther, to, other);
        const last = expected.at(-1);
        if (last?.second === to) {
          relClose(whole.states.get(to)!.get(asset)!.price, last.price, 'state price');
          expectConstituents(whole, last, to);
        } else {
          expect(whole.states.get(to)!.has(asset)).toBe(false);
        }

        // While an asset has a price, its latest row is at most a volume window old (capped at a day),
        // also when nothing in it changes: readers look back that far (loadIndexState, latestIndexPrices).
        const refreshS = Math.min(params.volumeWindowMinutes * 60, 86_400);
        for (const [of, ticks] of [[asset, expected], [other, expectedOther]] as const) {
          const rowSeconds = whole.rows.filter((r) => r.asset === of).map((r) => r.second);
          for (const t of ticks) expect(t.second - Math.max(...rowSeconds.filter((r) => r <= t.second)), `${of} at ${t.second}`).toBeLessThanOrEqual(refreshS);
        }

        // Two sweeps, the second starting again 10 seconds back from the state the first kept (as the runner
        // steps); the late trades of those 10 seconds are stored only after the first.
        const cut = Math.min(to, from + sc.cutS);
        const again = cut - 9;
        const onTime = trades.filter((t, i) => !(sc.trades[i]?.late && Math.floor(t.ts / 1000) >= again));
        const first = sweep({ from, to: cut }, new Map(), new Map(), 1, { available: onTime });
        if (again > from) {
          const second = sweep({ from: again, to }, first.states.get(again - 1)!, first.written, 2);
          expectTicks(storedOf(asset, first.rows, second.rows), expected, from, to);
          expectTicks(storedOf(other, first.rows, second.rows), expectedOther, from, to);
          // The same, continuing from the first sweep's verdicts, as the live loop does: its first
          // second computes only the assets whose inputs change in it (the late trades among them).
          const continued = sweep({ from: again, to }, first.states.get(again - 1)!, first.written, 2, { verdicts: first.verdicts });
          expectTicks(storedOf(asset, first.rows, continued.rows), expected, from, to);
          expectTicks(storedOf(other, first.rows, continued.rows), expectedOther, from, to);
          if (last?.second === to) expectConstituents(continued, last, to);
          if (lastOther?.second === to) expectConstituents(continued, lastOther, to, other);
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
    crossedBooks: [],
    disconnectedBefore: [],
    statusChanges: [],
    perpetualVenues: new Set(),
  };
  // An asset published before the range that has no market in it any more.
  const prior: IndexState = new Map([['gone', { price: 5, lastTradeAt: F * 1000 - 5_000, outliers: new Set<string>(), content: 'gone', writtenAt: F - 5 }]]);
  const sweep = (writes: { storedThrough: number; written: ReadonlyMap<string, string> }) =>
    sweepIndex({ range: { from: F, to: F + 4, keepAt: F + 2 }, inputs, prior, params: defaultIndexParams, rates, writes, computedAt: 9 });
  // Equal window values at 100 and 102 USD; the last trade behind the price is a's.
  const row = (second: number): TickRow => ({
    asset, second, price: 101, status: 'ok', constituents: ['a:XUSD', 'b:XUSD'], excluded: { 'c:XZZZ': 'no_usd_rate' },
    volume: 0, volume_usd: 0, trade_count: 0, last_trade_at: F * 1000 - 1_000, computed_at: 9,
  });
  const none = (second: number): TickRow => ({
    asset: 'gone', second, price: 0, status: 'none', constituents: [], excluded: {}, volume: 0, volume_usd: 0, trade_count: 0, last_trade_at: 0, computed_at: 9,
  });

  it('writes the first second and a lost price once; keeps the state at keepAt; the verdicts at `to`', () => {
    const r = sweep({ storedThrough: -1, written: new Map() });
    expect(r.rows).toEqual([none(F), row(F)]);
    expect([...r.written.keys()]).toEqual([tickKey(none(F)), tickKey(row(F))]);
    expect(r.assets).toBe(1);
    expect([...r.states.keys()]).toEqual([F + 2]);
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

  it('rewrites every second the written map names, in whatever order it lists them', () => {
    // Insertion order is no order of seconds: the runner adds rows of several assets, then the seconds stored before.
    const written = new Map([
      [tickKey({ asset, second: F + 3 }), ''],
      [tickKey({ asset, second: F + 1 }), ''],
    ]);
    expect(sweep({ storedThrough: -1, written }).rows).toEqual([none(F), row(F), row(F + 1), row(F + 3)]);
  });

  it('writes no row for an asset that never had a price, nor for a second computed again whose row did not change (a trade on an excluded market)', () => {
    // c (no USD rate) trades in F + 2: the asset is computed again there, with the same price, verdicts and
    // last trade behind the price, and no constituent trade. unrated's one market has no USD rate: never a price.
    const unrated = { asset: 'unrated', venue: 'a', market: 'XZZZ', quote: 'ZZZ' };
    const withTrade: IndexInputs = {
      ...inputs,
      windows: [...inputs.windows, { ...unrated, windowNotional: 1_000, windowTrades: 10, intervalTrades: 10, close: 7 }],
      lastTrades: [...inputs.lastTrades, { ...unrated, price: 7, lastTradeAt: F * 1000 - 1_000 }],
      seconds: [{ ...quoted('c', 'ZZZ'), second: F + 2, notional: 70, volume: 10, trades: 1, price: 7, lastTradeAt: (F + 2) * 1000 + 500 }],
    };
    const writes = { storedThrough: -1, written: new Map<string, string>() };
    const r = sweepIndex({ range: { from: F, to: F + 4, keepAt: F + 2 }, inputs: withTrade, prior, params: defaultIndexParams, rates, writes, computedAt: 9 });
    expect(r.rows).toEqual([none(F), row(F)]);
  });

  it('tickContent does not depend on the order of the exclusions', () => {
    const base = { price: 1, status: 'ok', constituents: [], last_trade_at: 2 };
    expect(tickContent({ ...base, excluded: { 'b:X': 'stale', 'a:X': 'outlier', 'c:X': 'perpetual' } })).toBe(
      tickContent({ ...base, excluded: { 'a:X': 'outlier', 'b:X': 'stale', 'c:X': 'perpetual' } }),
    );
  });
});

// Helpers of the hand-made sweeps below.
const epochMs = epochS * 1000;
/** A trade `offsetMs` after the epoch (a minute start) on `venue`'s market of `of` quoted in `quote` (inputsFor tells markets by venue and name only). */
const trade = (venue: string, offsetMs: number, price: number, { quantity = 1, quote = 'USD', of = asset, market = marketName(quote) } = {}): RawTrade => ({
  venue, market, asset: of, quote, trade_id: String(offsetMs), ts: epochMs + offsetMs, price, quantity,
});
/** One trade every `stepS` seconds from `fromS` to `toS` after the epoch, on each venue's USD market at its price. */
const series = (prices: Record<string, number>, fromS: number, toS: number, stepS = 1): RawTrade[] =>
  Object.entries(prices).flatMap(([venue, price]) =>
    Array.from({ length: Math.floor((toS - fromS) / stepS) + 1 }, (_, i) => trade(venue, (fromS + i * stepS) * 1000 + 250, price)),
  );
/** The sweep's rows, the state it kept and its verdicts at `to` equal the reference's ticks of `of` (none at `to`: no candidate then). */
function expectReference(result: SweepResult, expected: ReferenceTick[], range: SweepRange, of = asset): void {
  expectTicks(stored(result.rows.filter((r) => r.asset === of)), expected, range.from, range.to);
  const last = expected.at(-1);
  if (last?.second === range.to) expectConstituents(result, last, range.to, of);
  else expect(result.constituents.filter((c) => c.asset === of)).toEqual([]);
  const priceAt = new Map(expected.map((t) => [t.second, t.price]));
  expect([...result.states.keys()]).toEqual([range.keepAt]);
  for (const [second, state] of result.states) {
    const price = priceAt.get(second);
    if (price === undefined) expect(state.has(of), `state at ${second}`).toBe(false);
    else relClose(state.get(of)!.price, price, `state price at ${second}`);
  }
}
/**
 * Seconds after the epoch `from` to `to`, the state of `keepAt` kept (by default the middle one: the
 * seconds after it change the sweep's state, and the kept one must not change with them).
 */
const rangeOf = (from: number, to: number, keepAt = Math.floor((from + to) / 2)): SweepRange => ({ from: epochS + from, to: epochS + to, keepAt: epochS + keepAt });
/** Per second after the epoch in `from`..`to`, the reference's verdict on one market (null: in). */
const verdicts = (ticks: readonly ReferenceTick[], key: string, from: number, to: number) =>
  ticks.filter((t) => t.second >= epochS + from && t.second <= epochS + to).map((t) => [t.second - epochS, t.excluded[key] ?? null]);

describe('sweepIndex, an asset valued through bitcoin', () => {
  it("a market quoted in BTC, with one trade, follows bitcoin's index at every second", () => {
    const epoch = epochS * 1000;
    // bitcoin trades once a second, 10 dearer each time; pairedcoin once, at 0.001 BTC.
    const trades: RawTrade[] = Array.from({ length: 41 }, (_, i) => ({ venue: 's0', market: 'BTCUSD', asset: 'bitcoin', quote: 'USD', trade_id: String(i), ts: epoch + i * 1000 + 100, price: 90_000 + 10 * i, quantity: 1 }));
    trades.push({ venue: 's1', market: 'PAIRBTC', asset: 'pairedcoin', quote: 'BTC', trade_id: 'p', ts: epoch + 200, price: 0.001, quantity: 1_000 });
    const from = epochS + 1;
    const to = epochS + 40;
    const result = sweepStored(trades, [], [], { from, to, keepAt: to }, defaultIndexParams);
    const paired = indexAt(storedOf('pairedcoin', result.rows));
    for (let s = from; s <= to; s++) relClose(paired(s)!.price, 0.001 * (90_000 + 10 * (s - epochS)), `pairedcoin at ${s}`);
  });

  /** pairedcoin's ticks by the recomputation, its BTC quote valued at bitcoin's recomputed index of each second (none when bitcoin has none). */
  const pairedReference = (trades: readonly RawTrade[], range: SweepRange) => {
    const options = referenceOptions(defaultIndexParams, [], []);
    const bitcoinAt = new Map(referenceTicks(trades, 'bitcoin', range.from, range.to, options).map((t) => [t.second, t.price]));
    return referenceTicks(trades, 'pairedcoin', range.from, range.to, { ...options, usdPer: (quote, s) => (quote === 'BTC' ? bitcoinAt.get(s) : usdPer(quote)) });
  };
  const pairedTrade = (venue: string, quote: string, offsetMs: number, price: number): RawTrade => trade(venue, offsetMs, price, { of: 'pairedcoin', quote, market: `PAIR${quote}`, quantity: 1_000 });
  const bitcoinTrade = (offsetMs: number, price: number, venue = 's0'): RawTrade => trade(venue, offsetMs, price, { of: 'bitcoin', market: 'BTCUSD' });

  it("a market quoted in BTC beside a USD one follows bitcoin's index every second it moves, though its asset does not trade then", () => {
    // pairedcoin trades once on each market; bitcoin every second, 10 dearer each time.
    const trades = [...Array.from({ length: 41 }, (_, i) => bitcoinTrade(i * 1000 + 100, 90_000 + 10 * i)), pairedTrade('s1', 'BTC', 200, 0.001), pairedTrade('s2', 'USD', 300, 90.1)];
    const range = rangeOf(1, 40);
    const expected = pairedReference(trades, range);
    expect(new Set(expected.map((t) => t.price)).size).toBe(40);
    expectReference(sweepStored(trades, [], [], range, defaultIndexParams), expected, range, 'pairedcoin');
  });

  it("a market quoted in BTC that trades while bitcoin does not is valued at bitcoin's index of that second, carried from its last move", () => {
    // bitcoin trades in the first seconds only; pairedcoin's BTC market every 5 s, a little dearer each time.
    const trades = [bitcoinTrade(100, 90_000), bitcoinTrade(1_100, 90_050, 's1'), ...Array.from({ length: 8 }, (_, i) => pairedTrade('s1', 'BTC', i * 5_000 + 200, 0.001 + 1e-6 * i))];
    const range = rangeOf(1, 40);
    const expected = pairedReference(trades, range);
    expect(expected.map((t) => t.status)).toEqual(Array(40).fill('single_venue'));
    expectReference(sweepStored(trades, [], [], range, defaultIndexParams), expected, range, 'pairedcoin');
  });

  it('bitcoin without a price (its only market a perpetual) has no row, and a BTC-quoted market of another asset has no USD rate', () => {
    const trades = [bitcoinTrade(100, 90_000, 'perp'), pairedTrade('s1', 'BTC', 200, 0.001), pairedTrade('s2', 'USD', 300, 90.1)];
    const range = rangeOf(1, 20);
    expect(referenceTicks(trades, 'bitcoin', range.from, range.to, referenceOptions(defaultIndexParams, [], []))).toEqual([]);
    const expected = pairedReference(trades, range);
    expect(expected.every((t) => t.excluded['s1:PAIRBTC'] === 'no_usd_rate')).toBe(true);
    const result = sweepStored(trades, [], [], range, defaultIndexParams);
    expect(result.rows.filter((r) => r.asset === 'bitcoin')).toEqual([]);
    expectReference(result, expected, range, 'pairedcoin');
  });
});

describe('sweepIndex on hand-made trades, against the recomputation', () => {
  it('rolls the interval window at minute starts nothing traded in: a market turns stale as its trades join it, another comes back as old ones leave', () => {
    // Stale between 5 s and 2 min of age; mean interval over the 2 minutes before the current one.
    const params = indexParamsSchema.parse({ volumeWindowMinutes: 5, intervalWindowMinutes: 2, staleMinMs: 5_000, staleMaxMs: 120_000, staleIntervals: 5 });
    const trades = [
      // s0: 60 trades in minute 0 (a 2 s mean: stale 10 s after a trade), one at 1:30. At 3:00 minute 0
      // leaves the interval window: one trade left in it, stale only 2 min after 1:30.
      ...series({ s0: 100 }, 0, 59),
      trade('s0', 90_000, 101),
      // s1: trades until 1:45 with none in its window (stale 2 min after); at 2:00 they join it (a 2.6 s mean: 13 s).
      ...series({ s1: 100.5 }, 60, 105),
    ];
    // To 7:30: at 7:00 minute 1 leaves the 5 min volume window, and with it the asset's last candidates (no price from then).
    const range = rangeOf(10, 450);
    const expected = referenceTicks(trades, asset, range.from, range.to, referenceOptions(params, [], []));
    expect(verdicts(expected, 's1:SWPUSD', 119, 120)).toEqual([[119, null], [120, 'stale']]);
    expect(verdicts(expected, 's0:SWPUSD', 179, 180)).toEqual([[179, 'stale'], [180, null]]);
    expect(verdicts(expected, 's0:SWPUSD', 209, 210)).toEqual([[209, null], [210, 'stale']]);
    expect(expected.at(-1)?.second).toBe(epochS + 419);
    const result = sweepStored(trades, [], [], range, params);
    expectReference(result, expected, range);
    expect(result.assets).toBe(1);
  });

  it('rolls candles out of the volume window: weights move, a market is dropped the minute its last candle leaves, with no float residue', () => {
    // shortWindows: a 3 min volume window. s2 trades 3 times as much in minute 0 as after: its weight falls at 4:00.
    // s1 trades 0.1 USD in minute 0 and 0.2 in minute 1: they leave at 4:00 and 5:00, and 0.1 + 0.2 - 0.1 - 0.2 is
    // not 0 in floats. The range starts in minute 1: minute 0 is already in the window.
    const trades = [
      ...series({ s0: 100 }, 0, 330),
      ...series({ s2: 101 }, 0, 330).map((t) => ({ ...t, quantity: t.ts < epochMs + 60_000 ? 3 : 1 })),
      trade('s1', 10_000, 100, { quantity: 0.001 }),
      trade('s1', 70_000, 100, { quantity: 0.002 }),
    ];
    const range = rangeOf(90, 330);
    const expected = referenceTicks(trades, asset, range.from, range.to, referenceOptions(shortWindows, [], []));
    expect(verdicts(expected, 's1:SWPUSD', 299, 300)).toEqual([[299, 'stale'], [300, null]]);
    expect(expected.find((t) => t.second === epochS + 300)?.excluded).toEqual({});
    expectReference(sweepStored(trades, [], [], range, shortWindows), expected, range);
  });

  it('turns stale, within the minute, markets whose only trades are in that minute', () => {
    // shortWindows: with no trade in the interval window, stale 40 s after the last trade.
    const trades = [trade('s0', 5_000, 100), trade('s1', 6_000, 100.5)];
    const range = rangeOf(5, 59);
    const expected = referenceTicks(trades, asset, range.from, range.to, referenceOptions(shortWindows, [], []));
    expect(verdicts(expected, 's0:SWPUSD', 44, 45)).toEqual([[44, null], [45, 'stale']]);
    expect(verdicts(expected, 's1:SWPUSD', 45, 46)).toEqual([[45, null], [46, 'stale']]);
    expectReference(sweepStored(trades, [], [], range, shortWindows), expected, range);
  });

  it('keeps an outlier out until it is back within the readmission band, at its latest price of the minute; the band is for outliers only', () => {
    // shortWindows: an outlier beyond 2 % of the median, readmitted within 1 %. s3, 1.5 % off all along, is never out.
    const trades = [
      ...series({ s0: 100, s1: 100, s3: 101.5, s4: 100 }, 0, 100),
      trade('s2', 30_000, 100, { quantity: 20 }),
      trade('s2', 70_000, 103, { quantity: 20 }),
      trade('s2', 72_000, 101.5, { quantity: 20 }),
      trade('s2', 74_000, 100.5, { quantity: 20 }),
    ];
    const range = rangeOf(65, 90);
    const expected = referenceTicks(trades, asset, range.from, range.to, referenceOptions(shortWindows, [], []));
    // 3 % off at 1:10; 1.5 % at 1:12, still out as it was out; 0.5 % at 1:14, back in.
    expect(verdicts(expected, 's2:SWPUSD', 69, 74)).toEqual([[69, null], [70, 'outlier'], [71, 'outlier'], [72, 'outlier'], [73, 'outlier'], [74, null]]);
    expect(expected.every((t) => t.constituents.includes('s3:SWPUSD'))).toBe(true);
    expectReference(sweepStored(trades, [], [], range, shortWindows), expected, range);
  });

  it('turns a market stale in the second before the one its stale age rounds to, with nothing traded in that second', () => {
    // An interval window of 1 min and 7 intervals: s1's 14 trades of minute 0 make its stale age 7 * (60 000 / 14) ms,
    // 29 999.999999999996 in floats. Its last trade is at 32 s: 32 000 + that age rounds to 62 000 ms, yet the end of
    // second 61 (62 000 ms) is already more than that age after it. s0 trades every 2 s, never in second 61.
    const params = indexParamsSchema.parse({ volumeWindowMinutes: 3, intervalWindowMinutes: 1, staleMinMs: 5_000, staleMaxMs: 40_000, staleIntervals: 7 });
    expect(7 * (60_000 / 14)).toBeLessThan(30_000);
    const trades = [...series({ s0: 100 }, 0, 118, 2), ...Array.from({ length: 14 }, (_, i) => trade('s1', 32_000 - 2_000 * i, 100.5))];
    const range = rangeOf(50, 70);
    const expected = referenceTicks(trades, asset, range.from, range.to, referenceOptions(params, [], []));
    expect(verdicts(expected, 's1:SWPUSD', 60, 61)).toEqual([[60, null], [61, 'stale']]);
    expectReference(sweepStored(trades, [], [], range, params), expected, range);
  });

  it('remembers an outlier through seconds nothing traded in and from one sweep to the next; a market out for another reason comes back without the band', () => {
    // shortWindows: out beyond 2 % of the median, back in within 1 % only for a market that was out as an outlier.
    // s0, s1 and s4 trade at 100 every second (the median); nothing trades from 20 s to 29 s.
    const quiet = (t: RawTrade) => t.ts < epochMs + 20_000 || t.ts >= epochMs + 30_000;
    // s2: 3 % off, then 1.5 % (still out: it was an outlier), then 0.5 % (back in).
    const s2Price = (s: number) => (s < 30 ? 103 : s < 40 ? 101.5 : 100.5);
    const trades = [
      ...series({ s0: 100, s1: 100, s4: 100 }, 0, 59),
      ...Array.from({ length: 60 }, (_, s) => trade('s2', s * 1000 + 250, s2Price(s))),
      // s3: 1.5 % off all along, never an outlier; its crossed book counts up to the second ending 60 s after it, 14.
      ...series({ s3: 101.5 }, 0, 59),
    ].filter(quiet);
    const books = [{ venue: 's3', market: marketName('USD'), ts: epochMs - 45_000, crossed: true }];
    // Two sweeps, the second from the state the first kept at its last second.
    const first = sweepStored(trades, books, [], rangeOf(10, 34, 34), shortWindows);
    const again = rangeOf(35, 59);
    const second = sweepStored(trades, books, [], again, shortWindows, { prior: first.states.get(again.from - 1)!, written: first.written, computedAt: 2 });
    const at = indexAt(stored(first.rows, second.rows));
    const seconds = Array.from({ length: 50 }, (_, i) => 10 + i);
    const verdictsOf = (key: string) => seconds.map((s) => [s, at(epochS + s)?.excluded[key] ?? null]);
    expect(verdictsOf('s2:SWPUSD')).toEqual(seconds.map((s) => [s, s < 40 ? 'outlier' : null]));
    expect(verdictsOf('s3:SWPUSD')).toEqual(seconds.map((s) => [s, s <= 14 ? 'crossed_book' : null]));
    expect(seconds.every((s) => at(epochS + s)?.status === 'ok')).toBe(true);
    const expected = referenceTicks(trades, asset, epochS + 10, epochS + 59, referenceOptions(shortWindows, books, []));
    expectTicks(stored(first.rows, second.rows), expected, epochS + 10, epochS + 59);
  });

});

describe('sweepIndex on hand-made trades: candidates, statuses, books and resumed sweeps', () => {
  it('continuing from the state and verdicts a sweep kept computes what a sweep computing every asset at its first second computes, wherever it starts', () => {
    // sweepcoin trades every second. quietcoin trades on two markets at different prices and then
    // not at all: its markets turn stale, and at minute starts its candles leave the windows and its
    // trade intervals change, with no trade of it in the second. steadycoin trades every 10 s on two
    // markets, never in a minute's first second, one of them more each minute: as a minute starts,
    // the candle that leaves its window moves its weights, so its price.
    const quiet = 'quietcoin';
    const steady = 'steadycoin';
    const trades = [
      ...series({ s0: 100, s1: 100.4 }, 0, 420),
      ...Array.from({ length: 51 }, (_, i) => trade('s2', i * 3_000 + 400, 50, { of: quiet, market: 'QUIETUSD' })),
      ...Array.from({ length: 34 }, (_, i) => trade('s3', (100 + i * 3) * 1000 + 700, 50.5, { of: quiet, market: 'QUIETUSD' })),
      ...Array.from({ length: 42 }, (_, i) => trade('s2', (i * 10 + 7) * 1000, 20, { of: steady, market: 'STEADYUSD', quantity: 1 + Math.floor(i / 6) })),
      ...Array.from({ length: 42 }, (_, i) => trade('s3', (i * 10 + 7) * 1000 + 500, 20.2, { of: steady, market: 'STEADYUSD', quantity: 3 })),
    ];
    // The sweep continued from ended 9 s after `again` (as the runner's steps overlap), or just before it.
    for (const [again, overlap] of [120, 150, 181, 200, 240, 241, 300, 367].flatMap((s): [number, number][] => [[s, 9], [s, -1]])) {
      const first = sweepStored(trades, [], [], rangeOf(10, again + overlap, again - 1), shortWindows);
      const from = { prior: first.states.get(epochS + again - 1)!, written: first.written, computedAt: 2 };
      const full = sweepStored(trades, [], [], rangeOf(again, 400), shortWindows, from);
      const continued = sweepStored(trades, [], [], rangeOf(again, 400), shortWindows, { ...from, verdicts: first.verdicts });
      const case_ = `from ${again}, the first sweep to ${again + overlap}`;
      expect(continued.rows, `rows ${case_}`).toEqual(full.rows);
      expect(continued.constituents, `verdicts ${case_}`).toEqual(full.constituents);
      expect(continued.states, `state ${case_}`).toEqual(full.states);
      expect(full.constituents.some((c) => c.asset === quiet), `quietcoin has verdicts at the end, ${case_}`).toBe(true);
    }
  });

  it('takes as candidates a market past the stale look-back, at the close of its last candle (stale), and a perpetual (left out)', () => {
    const params = defaultIndexParams;
    // s2 last traded 15 min before the range: past the 10 min look-back, within the 24 h volume window.
    const trades = [...series({ s0: 100, s1: 100.5, perp: 100.2 }, 0, 20), trade('s2', -900_000, 99)];
    const range = rangeOf(10, 20);
    const expected = referenceTicks(trades, asset, range.from, range.to, referenceOptions(params, [], []));
    expect(verdicts(expected, 's2:SWPUSD', 10, 20).every(([, verdict]) => verdict === 'stale')).toBe(true);
    expect(verdicts(expected, 'perp:SWPUSD', 10, 20).every(([, verdict]) => verdict === 'perpetual')).toBe(true);
    const result = sweepStored(trades, [], [], range, params);
    expectReference(result, expected, range);
    expect(result.constituents.find((c) => c.venue === 's2')).toMatchObject({ price_usd: 99, reason: 'stale' });
  });

  it('applies a status from the second it was published in (the last one before the range from the start), and a crossed book up to exactly its maximum age', () => {
    const params = defaultIndexParams;
    const trades = series({ s0: 100, s1: 100.5, s2: 99.5, s3: 100.2 }, 0, 45);
    const status = (venue: string, atS: number, connected: boolean) => ({ venue, market: marketName('USD'), ts: (epochS + atS) * 1000, connected });
    const statuses = [
      // Before the range: s2 connected, s3 down until second 15.
      status('s2', 3, true),
      status('s3', 5, false),
      status('s3', 15, true),
      // Published at the first millisecond of seconds 20 and 25.
      status('s1', 20, false),
      status('s1', 25, true),
    ];
    // Measured 60 s (the maximum age) before the end of second 30.
    const books = [{ venue: 's2', market: marketName('USD'), ts: (epochS - 29) * 1000, crossed: true }];
    const range = rangeOf(10, 40);
    const expected = referenceTicks(trades, asset, range.from, range.to, referenceOptions(params, books, statuses));
    expect(verdicts(expected, 's1:SWPUSD', 19, 25)).toEqual([[19, null], [20, 'disconnected'], [21, 'disconnected'], [22, 'disconnected'], [23, 'disconnected'], [24, 'disconnected'], [25, null]]);
    expect(verdicts(expected, 's2:SWPUSD', 30, 31)).toEqual([[30, 'crossed_book'], [31, null]]);
    expect(verdicts(expected, 's3:SWPUSD', 14, 15)).toEqual([[14, 'disconnected'], [15, null]]);
    expectReference(sweepStored(trades, books, statuses, range, params), expected, range);
  });

  it('evaluates the seconds at which crossed books of several markets start and stop counting, and statuses take effect, with no trade in them', () => {
    const params = defaultIndexParams;
    // One trade per market in minute 0, each fresh for 10 min after it: only the books and statuses change the index.
    // Listed out of key order: the verdicts come in key order all the same.
    const trades = [trade('s2', 1_000, 99.5), trade('s1', 2_000, 100.5), trade('s0', 3_000, 100)];
    // A crossed book counts for the seconds ending within 60 s of it: s1's from second 39 to 159, s2's up to 69.
    const books = [
      { venue: 's1', market: marketName('USD'), ts: (epochS + 100) * 1000, crossed: true },
      { venue: 's2', market: marketName('USD'), ts: (epochS + 10) * 1000, crossed: true },
      { venue: 's0', market: marketName('USD'), ts: (epochS + 50) * 1000, crossed: false },
    ];
    // s0 down from 100.5 s to 130.2 s.
    const statuses = [
      { venue: 's0', market: marketName('USD'), ts: epochMs + 100_500, connected: false },
      { venue: 's0', market: marketName('USD'), ts: epochMs + 130_200, connected: true },
    ];
    const range = rangeOf(20, 200);
    const expected = referenceTicks(trades, asset, range.from, range.to, referenceOptions(params, books, statuses));
    expect(verdicts(expected, 's1:SWPUSD', 38, 39)).toEqual([[38, null], [39, 'crossed_book']]);
    expect(verdicts(expected, 's2:SWPUSD', 69, 70)).toEqual([[69, 'crossed_book'], [70, null]]);
    expect(verdicts(expected, 's0:SWPUSD', 99, 100)).toEqual([[99, null], [100, 'disconnected']]);
    expect(verdicts(expected, 's0:SWPUSD', 129, 130)).toEqual([[129, 'disconnected'], [130, null]]);
    expect(verdicts(expected, 's1:SWPUSD', 159, 160)).toEqual([[159, 'crossed_book'], [160, null]]);
    expectReference(sweepStored(trades, books, statuses, range, params), expected, range);
  });

  it('sweeps again from the state it kept over a late trade, writing again only the rows that changed', () => {
    const params = defaultIndexParams;
    const trades = series({ s0: 100, s1: 100.5 }, 0, 40);
    // Stored only after the first sweep.
    const late = trade('s1', 25_600, 101);
    const first = sweepStored(trades, [], [], rangeOf(10, 30, 20), params);
    const again = rangeOf(21, 40);
    const second = sweepStored([...trades, late], [], [], again, params, { prior: first.states.get(again.from - 1)!, written: first.written, computedAt: 2 });
    const expected = referenceTicks([...trades, late], asset, epochS + 10, epochS + 40, referenceOptions(params, [], []));
    expectTicks(stored(first.rows, second.rows), expected, epochS + 10, epochS + 40);
    // Identical up to the late trade; from it on, its volume moves the weights.
    expect(second.rows.filter((r) => r.second <= epochS + 30).map((r) => r.second - epochS)).toEqual([25, 26, 27, 28, 29, 30]);
  });

  it('values a BTC-quoted market of another asset at the bitcoin index of the same second', () => {
    const params = defaultIndexParams;
    const bitcoin = 'bitcoin';
    // Bitcoin on two venues, trading in turns so its index moves every second; sweepcoin on USD and on BTC (about 100 USD).
    const trades = [
      ...Array.from({ length: 21 }, (_, i) => trade(i % 2 ? 's1' : 's0', i * 2_000 + 100, 50_000 + 40 * i, { of: bitcoin, market: 'BTCUSD' })),
      ...Array.from({ length: 21 }, (_, i) => trade(i % 2 ? 's0' : 's1', i * 2_000 + 1_100, 50_020 - 30 * i, { of: bitcoin, market: 'BTCUSD' })),
      ...series({ s0: 100 }, 0, 40, 2),
      ...Array.from({ length: 21 }, (_, i) => trade('s1', i * 2_000 + 1_300, 0.002 + 1e-6 * i, { quote: 'BTC' })),
    ];
    const range = rangeOf(10, 40);
    const options = referenceOptions(params, [], []);
    const bitcoinTicks = referenceTicks(trades, bitcoin, range.from, range.to, options);
    const bitcoinAt = new Map(bitcoinTicks.map((t) => [t.second, t.price]));
    const expected = referenceTicks(trades, asset, range.from, range.to, { ...options, usdPer: (quote, s) => (quote === 'BTC' ? bitcoinAt.get(s) : usdPer(quote)) });
    expect(expected.every((t) => t.constituents.includes('s1:SWPBTC'))).toBe(true);
    const result = sweepStored(trades, [], [], range, params);
    expectReference(result, bitcoinTicks, range, bitcoin);
    expectReference(result, expected, range);
    expect(result.assets).toBe(2);
  });
});

describe('sweepIndex: an unchanged row written again (rowRefreshSeconds)', () => {
  it('is a volume window, at most a day', () => {
    expect(rowRefreshSeconds(shortWindows)).toBe(180);
    expect(rowRefreshSeconds(indexParamsSchema.parse({ volumeWindowMinutes: 1_440 }))).toBe(86_400);
    expect(rowRefreshSeconds(indexParamsSchema.parse({ volumeWindowMinutes: 2_880 }))).toBe(86_400);
  });

  it('writes a carried price again exactly 3 min (the volume window) after its latest row and not a second before, while unrated and perpetual markets keep trading; a resumed sweep too', () => {
    // shortWindows. s0 and s1 trade until 0:30, go stale (fail closed, the price carried) and leave the
    // volume window at 4:00. perp trades every 7 s from 0:02 and s2's GBP market (no USD rate) from 4:33:
    // from then the row stays the same. Neither trades at 7:33, 10:33 or 13:33 (nor does a minute start),
    // so only the refresh makes the sweep evaluate the asset then; they trade at 10:32 and 13:32.
    const trades = [
      ...series({ s0: 100, s1: 100.5 }, 0, 30),
      ...series({ perp: 100.2 }, 2, 900, 7),
      ...Array.from({ length: 90 }, (_, i) => trade('s2', (273 + 7 * i) * 1000 + 250, 80, { quote: 'GBP' })),
    ];
    const range = rangeOf(10, 820, 500);
    const expected = referenceTicks(trades, asset, range.from, range.to, referenceOptions(shortWindows, [], []));
    expect(verdicts(expected, 's0:SWPUSD', 239, 240)).toEqual([[239, 'stale'], [240, null]]);
    expect(verdicts(expected, 's2:SWPGBP', 272, 273)).toEqual([[272, null], [273, 'no_usd_rate']]);
    expect(expected.filter((t) => t.second >= epochS + 273).every((t) => t.status === 'fail_closed' && Object.keys(t.excluded).sort().join() === 'perp:SWPUSD,s2:SWPGBP')).toBe(true);
    const result = sweepStored(trades, [], [], range, shortWindows);
    expectReference(result, expected, range);
    const rowsFrom = (r: SweepResult, s: number) => r.rows.filter((row) => row.second >= epochS + s).map((row) => row.second - epochS);
    expect(rowsFrom(result, 240)).toEqual([240, 273, 453, 633, 813]);
    // Resumed from the state kept at 8:20: its latest row is 7:33's, so the next is at 10:33.
    const again = rangeOf(501, 820);
    const resumed = sweepStored(trades, [], [], again, shortWindows, { prior: result.states.get(again.from - 1)!, written: new Map(), computedAt: 2 });
    expect(rowsFrom(resumed, 501)).toEqual([633, 813]);
  });

  it('with a 2-day volume window, writes an unchanged row again after a day', () => {
    // Two venues, stale (no last trade) but in the window all along: fail closed, the prior price carried.
    const params = indexParamsSchema.parse({ volumeWindowMinutes: 2_880 });
    const F = epochS + 10;
    const window = (venue: string) => ({ asset, venue, market: 'XUSD', quote: 'USD', windowNotional: 1_000, windowTrades: 10, intervalTrades: 10, close: 100 });
    const inputs: IndexInputs = {
      windows: [window('a'), window('b')], buckets: [], lastTrades: [], seconds: [], crossedBooks: [], disconnectedBefore: [], statusChanges: [], perpetualVenues: new Set(),
    };
    // The prior row says something else (its content): the first second is written.
    const prior: IndexState = new Map([[asset, { price: 101, lastTradeAt: F * 1000 - 1_000, outliers: new Set<string>(), content: 'earlier', writtenAt: F - 5 }]]);
    const r = sweepIndex({ range: { from: F, to: F + 100_000, keepAt: F + 100_000 }, inputs, prior, params, rates, writes: { storedThrough: -1, written: new Map() }, computedAt: 1 });
    expect(r.rows.map((row) => [row.second - F, row.status, row.price])).toEqual([[0, 'fail_closed', 101], [86_400, 'fail_closed', 101]]);

    // Resumed at 100 s (minute 60 s) from that state, its latest row made older: a day old by the minute's
    // start, it is written again at the first second; a day old only a second after that one, a second later.
    const kept = r.states.get(F + 100_000)!.get(asset)!;
    const resumed = (writtenAt: number) =>
      sweepIndex({ range: { from: F + 100, to: F + 120, keepAt: F + 120 }, inputs, prior: new Map([[asset, { ...kept, writtenAt }]]), params, rates, writes: { storedThrough: -1, written: new Map() }, computedAt: 2 })
        .rows.map((row) => row.second - F);
    expect(resumed(epochS + 60 - 86_400)).toEqual([100]);
    expect(resumed(F + 101 - 86_400)).toEqual([101]);
  });
});
