// Liquidations end to end: random streams through the bus and the sink into the store, and every
// figure of /v1/liquidations recomputed here in plain TypeScript from the events that were sent.
import fc from 'fast-check';
import { beforeAll, describe, expect, it, test } from 'vitest';
import { createMemoryBus } from '../../infra/bus/memoryBus.ts';
import type { LiquidationEvent } from '../../infra/events.ts';
import { findAsset } from '../../infra/catalog/catalog.ts';
import { isSampledLiquidationFeed, startLiquidationSink } from '../../aggregate/liquidationSink.ts';
import { liquidationRanges, loadLiquidations, topEventCount, type LiquidationRange, type LiquidationsResponse } from '../routes/liquidations.ts';
import { useTestApi } from '../../test/support/apiHarness.ts';
import { until } from '../../test/support/until.ts';
import { silentLog } from '../../test/support/harness.ts';
import { landingStore } from './landingStore.ts';

// One store for the whole file: the property test uses it directly, the HTTP tests through the API.
const api = useTestApi({ keyName: 'liquidations-test' });

const minute = 60_000;
const day = 86_400_000;
const venues = ['binance-futures', 'bybit-linear', 'okx-swap', 'bitmex'] as const;
const assets = ['bitcoin', 'ethereum', 'solana', 'dogecoin'] as const;
// BTC-quoted markets are not valued in USD: they count in `unvalued` only.
const quotes = ['USDT', 'USDC', 'USD', 'BTC'] as const;
const valuedQuotes = new Set<string>(['USD', 'USDT', 'USDC']);
const ranges = Object.keys(liquidationRanges) as LiquidationRange[];
// The test's own rule of which feeds sample (production asks the venue descriptors).
const sampledVenues = new Set<string>(['binance-futures', 'okx-swap']);
const isSampled = (venue: string) => sampledVenues.has(venue);


/** Relative 1e-9 (exact for zero). */
function expectClose(actual: number, expected: number, what: string) {
  const scale = Math.max(Math.abs(actual), Math.abs(expected));
  expect(Math.abs(actual - expected) <= 1e-9 * scale, `${what}: ${actual} vs ${expected}`).toBe(true);
}

/** Everything the endpoint answers, recomputed from the distinct events sent. */
function recompute(events: readonly LiquidationEvent[], now: number, range: LiquidationRange, venue: string | undefined) {
  const { ms, barMs } = liquidationRanges[range];
  const to = Math.floor(now / minute) * minute + minute;
  const from = to - ms;
  const mine = events.filter((e) => venue === undefined || e.venue === venue);
  const usd = (e: LiquidationEvent) => (valuedQuotes.has(e.quote) ? e.price * e.quantity : undefined);
  const inWindow = mine.filter((e) => e.ts >= from && e.ts < to);
  const valued = inWindow.filter((e) => usd(e) !== undefined);
  const sum = (list: LiquidationEvent[], side?: 'long' | 'short') =>
    list.filter((e) => side === undefined || e.positionSide === side).reduce((acc, e) => acc + (usd(e) ?? 0), 0);

  const bars = [];
  for (let t = Math.floor(from / barMs) * barMs; t < to; t += barMs) {
    const inBar = valued.filter((e) => Math.max(t, from) <= e.ts && e.ts < Math.min(t + barMs, to));
    bars.push({ t, long: sum(inBar, 'long'), short: sum(inBar, 'short') });
  }
  const breakdown = (keyOf: (e: LiquidationEvent) => string) => {
    const out = new Map<string, { long: number; short: number; total: number }>();
    for (const key of new Set(valued.map(keyOf))) {
      const list = valued.filter((e) => keyOf(e) === key);
      out.set(key, { long: sum(list, 'long'), short: sum(list, 'short'), total: sum(list) });
    }
    return out;
  };
  // ClickHouse compares strings by bytes: so does `<` on these ASCII ids.
  const byText = (x: string, y: string) => (x < y ? -1 : x > y ? 1 : 0);
  const order = (a: LiquidationEvent, b: LiquidationEvent) =>
    usd(b)! - usd(a)! || b.ts - a.ts || byText(a.venue, b.venue) || byText(a.market, b.market) || byText(a.liquidationId, b.liquidationId);
  const top = [...valued].sort(order).slice(0, topEventCount).map((e) => ({
    assetId: e.asset,
    venueId: e.venue,
    market: e.market,
    positionSide: e.positionSide,
    price: e.price,
    quantity: e.quantity,
    valueUsd: usd(e)!,
    ts: e.ts,
  }));
  const long = sum(valued, 'long');
  const total = sum(valued);
  const previous = mine.filter((e) => e.ts >= from - ms && e.ts < from);
  const before = mine.filter((e) => e.ts < to).map((e) => e.ts);
  return {
    from,
    to,
    long,
    short: sum(valued, 'short'),
    total,
    previousTotal: sum(previous),
    bars,
    assets: breakdown((e) => e.asset),
    venues: breakdown((e) => e.venue),
    events: top,
    count: valued.length,
    unvalued: inWindow.length - valued.length,
    longShare: total > 0 ? long / total : null,
    updatedAt: before.length > 0 ? Math.max(...before) : 0,
  };
}

function compare(actual: LiquidationsResponse, expected: ReturnType<typeof recompute>, label: string) {
  expect(actual.from, label).toBe(expected.from);
  expect(actual.to, label).toBe(expected.to);
  for (const k of ['long', 'short', 'total', 'previousTotal'] as const) expectClose(actual[k], expected[k], `${label} ${k}`);
  expect(actual.bars.map((b) => b.t), label).toEqual(expected.bars.map((b) => b.t));
  actual.bars.forEach((b, i) => {
    expectClose(b.long, expected.bars[i]!.long, `${label} bar ${b.t} long`);
    expectClose(b.short, expected.bars[i]!.short, `${label} bar ${b.t} short`);
  });
  for (const [rows, want, idOf] of [
    [actual.assets, expected.assets, (r: any) => r.assetId],
    [actual.venues, expected.venues, (r: any) => r.venueId],
  ] as const) {
    expect(new Set(rows.map(idOf)), label).toEqual(new Set(want.keys()));
    for (const r of rows) {
      const w = want.get(idOf(r))!;
      expectClose(r.long, w.long, `${label} ${idOf(r)} long`);
      expectClose(r.short, w.short, `${label} ${idOf(r)} short`);
      expectClose(r.total, w.total, `${label} ${idOf(r)} total`);
    }
    // Largest first (equal totals may differ in the last bits, summed in another order).
    for (let i = 1; i < rows.length; i++) expect(rows[i - 1]!.total >= rows[i]!.total * (1 - 1e-9), label).toBe(true);
  }
  for (const a of actual.assets) expect(a.symbol).toBe(findAsset(a.assetId)!.symbol);
  for (const v of actual.venues) expect(v.sampled, `${label} ${v.venueId} sampled`).toBe(isSampled(v.venueId));
  expect(actual.events, label).toEqual(expected.events);
  expect(actual.highlights.largest, label).toEqual(expected.events[0] ?? null);
  expect(actual.highlights.count, label).toBe(expected.count);
  expect(actual.highlights.unvalued, label).toBe(expected.unvalued);
  if (expected.longShare === null) expect(actual.highlights.longShare, label).toBeNull();
  else expectClose(actual.highlights.longShare!, expected.longShare, `${label} longShare`);
  expect(actual.updatedAt, label).toBe(expected.updatedAt);
}

/** How far before the end of the window an event happened: spread over 62 days, plus the window edges. */
const ageFromWindowEnd = fc.oneof(
  fc.integer({ min: 1, max: 62 * day }),
  fc.integer({ min: 1, max: 2 * 3_600_000 }),
  // The first and last millisecond of every window and of the window before it; negative = after `to`.
  fc.tuple(fc.constantFrom(0, ...ranges.flatMap((r) => [liquidationRanges[r].ms, 2 * liquidationRanges[r].ms])), fc.constantFrom(-1, 0, 1)).map(([edge, d]) => edge + d),
  fc.integer({ min: -3 * minute, max: 0 }),
);
// Repeated prices and quantities make equal USD values, to exercise the order of ties.
const price = fc.oneof(fc.double({ min: 1e-4, max: 2e5, noNaN: true, noDefaultInfinity: true }), fc.constantFrom(100, 2_500.5));
const quantity = fc.oneof(fc.double({ min: 1e-6, max: 5e3, noNaN: true, noDefaultInfinity: true }), fc.constantFrom(1, 0.5));

const stream = fc
  .record({
    // Any millisecond of a day, so windows rarely align with bars.
    now: fc.integer({ min: Date.UTC(2026, 2, 1), max: Date.UTC(2026, 2, 2) - 1 }),
    drafts: fc.array(
      fc.record({
        venue: fc.constantFrom(...venues),
        asset: fc.constantFrom(...assets),
        quote: fc.constantFrom(...quotes),
        age: ageFromWindowEnd,
        price,
        quantity,
        positionSide: fc.constantFrom('long' as const, 'short' as const),
      }),
      { maxLength: 60 },
    ),
    filterVenue: fc.constantFrom(undefined, ...venues, 'deribit'),
  })
  .chain(({ now, drafts, filterVenue }) => {
    const to = Math.floor(now / minute) * minute + minute;
    const events: LiquidationEvent[] = drafts.map((d, i) => ({
      type: 'liquidation',
      venue: d.venue,
      market: `${findAsset(d.asset)!.symbol.toUpperCase()}${d.quote}`,
      asset: d.asset,
      quote: d.quote,
      liquidationId: String(i),
      ts: to - d.age,
      receivedAt: to - d.age + 3,
      price: d.price,
      quantity: d.quantity,
      positionSide: d.positionSide,
    }));
    return fc.record({
      now: fc.constant(now),
      events: fc.constant(events),
      filterVenue: fc.constant(filterVenue),
      // Delivered out of order, with some events twice in the first pass...
      firstPass: fc.shuffledSubarray(events, { minLength: events.length, maxLength: events.length }).chain((all) =>
        fc.subarray(events).map((dups) => [...all, ...dups]),
      ),
      // ...and a replay of a subset after they were stored (a crash between insert and commit).
      replay: fc.shuffledSubarray(events),
      publishSlices: fc.integer({ min: 1, max: 7 }),
    });
  });

function publishInSlices(bus: ReturnType<typeof createMemoryBus>, events: LiquidationEvent[], slices: number) {
  const size = Math.max(1, Math.ceil(events.length / slices));
  for (let i = 0; i < events.length; i += size) bus.publish(events.slice(i, i + size));
}

test('random liquidation streams, out of order and replayed: the endpoint equals a recomputation from the events', async () => {
  const { store } = api;
  let runs = 0;
  await fc.assert(
    fc.asyncProperty(stream, async ({ now, events, filterVenue, firstPass, replay, publishSlices }) => {
      await store.client.command({ query: 'TRUNCATE TABLE liquidations' });
      await store.client.command({ query: 'TRUNCATE TABLE liquidations_1m' });
      const bus = createMemoryBus({ maxBatch: 9 });
      const sink = await startLiquidationSink({ bus, store, log: silentLog, batchRows: 7, batchMs: 5, group: `prop-${runs++}`, isSampled });
      try {
        publishInSlices(bus, firstPass, publishSlices);
        const sinkStats = () => JSON.stringify(sink.stats());
        await until(
          () => {
            const s = sink.stats();
            return s.received === firstPass.length && s.inserted + s.duplicates === s.received;
          },
          `the sink to receive and store the first pass (${firstPass.length} events)`,
          { everyMs: 10, context: sinkStats },
        );
        publishInSlices(bus, replay, publishSlices);
        await until(() => sink.stats().received === firstPass.length + replay.length, `the sink to receive the replay (${replay.length} events)`, { everyMs: 10, context: sinkStats });
      } finally {
        await sink.stop();
        await bus.close();
      }
      const stats = sink.stats();
      expect(stats.inserted).toBe(events.length);
      expect(stats.duplicates).toBe(firstPass.length + replay.length - events.length);
      const [stored] = await store.rows<{ n: number; sampled: number }>('SELECT count() AS n, countIf(sampled) AS sampled FROM liquidations');
      expect(stored!.n).toBe(events.length);
      expect(stored!.sampled).toBe(events.filter((e) => isSampled(e.venue)).length);

      for (const range of ranges) {
        compare(await loadLiquidations(store, { range }, now), recompute(events, now, range, undefined), `${range} all venues`);
      }
      // One venue filter per run (a venue with no events included) on two ranges.
      for (const range of ['1h', '30d'] as const) {
        compare(await loadLiquidations(store, { range, venue: filterVenue }, now), recompute(events, now, range, filterVenue), `${range} ${filterVenue}`);
      }
    }),
    { numRuns: 20 },
  );
});

test('while liquidations land: totals, bars, breakdowns, counts and largest events are one read of the window', async () => {
  // Issue 25: one response, one snapshot. A liquidation lands before every read the endpoint makes
  // (landingStore.ts), larger than any other, so events[] tells which landings its read saw.
  await api.store.client.command({ query: 'TRUNCATE TABLE liquidations' });
  await api.store.client.command({ query: 'TRUNCATE TABLE liquidations_1m' });
  // Written as in production: through the bus and the sink, each batch awaited until stored.
  const bus = createMemoryBus();
  const sink = await startLiquidationSink({ bus, store: api.store, log: silentLog, batchRows: 100, batchMs: 5, group: 'landing', isSampled });
  const write = async (events: LiquidationEvent[]) => {
    const stored = sink.stats().inserted + events.length;
    bus.publish(events);
    await until(() => sink.stats().inserted === stored, `the sink to store ${stored} liquidations`, { everyMs: 5 });
  };
  try {
    const now = Math.floor(Date.now() / minute) * minute + 41_234;
    const hour = liquidationRanges['1h'].ms;
    const bar = liquidationRanges['1h'].barMs;
    // Before the end of the 1h window: the edges of the window before it, of this one and of its bars.
    const ages = [2 * hour + 1, 2 * hour, hour + 1, hour, hour - 1, ...[1, 4, 11].flatMap((j) => [hour - j * bar + 1, hour - j * bar, hour - j * bar - 1]), 1, 0, -1];
    const to = Math.floor(now / minute) * minute + minute;
    const seeded: LiquidationEvent[] = ages.map((age, i) => {
      const asset = assets[i % assets.length]!;
      const quote = quotes[(i >> 1) % quotes.length]!;
      return {
        type: 'liquidation', venue: venues[i % venues.length]!, market: `${findAsset(asset)!.symbol.toUpperCase()}${quote}`, asset, quote, liquidationId: `seed-${i}`,
        ts: to - age, receivedAt: to - age + 3, price: 100 + 37 * i, quantity: 1 + (i % 7), positionSide: i % 3 === 0 ? 'short' : 'long',
      };
    });
    await write(seeded);

    const landed: LiquidationEvent[] = [];
    const cases: { range: LiquidationRange; venue?: string }[] = [{ range: '1h' }, { range: '24h', venue: 'bybit-linear' }];
    for (const [i, { range, venue }] of cases.entries()) {
      const base = 1_000_000 * (i + 1);
      const writing = landingStore(api.store, async (n) => {
        const e: LiquidationEvent = {
          type: 'liquidation', venue: 'bybit-linear', market: 'SOLUSDT', asset: 'solana', quote: 'USDT', liquidationId: `land-${i}-${n}`,
          ts: now - 5_000 + n, receivedAt: now, price: base + n, quantity: 1, positionSide: 'short',
        };
        landed.push(e);
        await write([e]);
      });
      const actual = await loadLiquidations(writing.store, { range, venue }, now);
      const label = `${range} ${venue ?? 'all venues'}`;
      // Its one read of the window saw this case's landings 1..k, later reads more.
      const seen = actual.events.filter((e) => e.price >= base && e.price < base + 1_000_000).map((e) => e.price - base);
      const k = seen.length;
      expect(seen.sort((a, b) => a - b), label).toEqual(Array.from({ length: k }, (_, j) => j + 1));
      expect(k, label).toBeGreaterThan(0);
      const visible = [...seeded, ...landed.filter((e) => !e.liquidationId.startsWith(`land-${i}-`) || Number(e.liquidationId.split('-')[2]) <= k)];
      compare(actual, recompute(visible, now, range, venue), label);
      // The totals are the sums of the parts served: the bars exactly, the breakdowns to the cent.
      expect(actual.bars.reduce((s, b) => s + b.long, 0), label).toBe(actual.long);
      expect(actual.bars.reduce((s, b) => s + b.short, 0), label).toBe(actual.short);
      for (const parts of [actual.assets, actual.venues]) expect(Math.abs(parts.reduce((s, p) => s + p.total, 0) - actual.total), label).toBeLessThan(0.005);
      // A read after it saw more: had any figure come from a second read, it would have disagreed.
      expect(writing.landed(), label).toBeGreaterThan(k);
    }
  } finally {
    await sink.stop();
    await bus.close();
  }
});

test('by default a feed is sampled when its venue descriptor says so', async () => {
  const { nativeVenues } = await import('../../ingest/venues/registry.ts');
  for (const v of nativeVenues) expect(isSampledLiquidationFeed(v.id), v.id).toBe(v.liquidations?.sampled === true);
  expect(isSampledLiquidationFeed('no-such-venue')).toBe(false);
});

describe('GET /v1/liquidations', () => {
  beforeAll(async () => {
    await api.store.client.command({ query: 'TRUNCATE TABLE liquidations' });
    await api.store.client.command({ query: 'TRUNCATE TABLE liquidations_1m' });
    const ts = Date.now() - 5 * minute;
    await api.store.insert('liquidations', [
      { asset: 'bitcoin', venue: 'binance-futures', market: 'BTCUSDT', quote: 'USDT', liquidation_id: 'a', ts, received_at: ts, price: 90_000, quantity: 0.5, position_side: 'long', sampled: false },
      { asset: 'bitcoin', venue: 'bybit-linear', market: 'BTCUSDT', quote: 'USDT', liquidation_id: 'b', ts: ts - 2 * day, received_at: ts, price: 80_000, quantity: 1, position_side: 'short', sampled: false },
    ]);
  });
  const call = (query: string) => api.get(`/v1/liquidations${query}`);

  it('defaults to 24h and answers the spec fields', async () => {
    const res = await call('');
    expect(res.status).toBe(200);
    const body = res.json as LiquidationsResponse;
    expect(body.to - body.from).toBe(day);
    expect(body.bars.length).toBeGreaterThanOrEqual(24);
    expect(body).toMatchObject({ long: 45_000, short: 0, total: 45_000, previousTotal: 0, highlights: { count: 1, longShare: 1, unvalued: 0 } });
    expect(body.updatedAt).toBe(body.events[0]!.ts);
    expect(res.headers.get('cache-control')).toBe('private, max-age=30');
    const week = (await call('?range=7d')).json as LiquidationsResponse;
    expect(week.total).toBe(125_000);
  });

  it('filters on a known venue, and answers zeros for one without liquidations', async () => {
    const body = (await call('?range=7d&venue=binance-futures')).json as LiquidationsResponse;
    expect(body.total).toBe(45_000);
    expect(body.venues.map((v) => v.venueId)).toEqual(['binance-futures']);
    const spot = (await call('?range=7d&venue=binance')).json as LiquidationsResponse;
    expect(spot).toMatchObject({ total: 0, previousTotal: 0, assets: [], venues: [], events: [], updatedAt: 0 });
    expect(spot.highlights).toEqual({ largest: null, count: 0, longShare: null, unvalued: 0 });
  });

  it.each([
    ['?range=2h', 'range', '1h, 4h, 12h, 24h, 7d, 30d'],
    ['?range=', 'range', '1h, 4h'],
    ['?venue=nope', 'venue', 'binance'],
    ['?venue=BINANCE', 'venue', 'known exchange id'],
    ['?venue=binance&venue=binance', 'venue', 'known exchange id'],
  ])('%s is 400 bad_request naming %s', async (query, name, hint) => {
    const res = await call(query);
    expect(res.status).toBe(400);
    const { error } = res.json as { error: { code: string; message: string } };
    expect(error.code).toBe('bad_request');
    expect(error.message).toContain(name);
    expect(error.message).toContain(hint);
  });
});
