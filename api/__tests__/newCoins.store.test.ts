// Listings: random trades into the store, and /v1/new-coins recomputed here in plain TypeScript from them.
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it, test } from 'vitest';
import { findAsset } from '../../infra/catalog/catalog.ts';
import { discoveredAsset } from '../../infra/catalog/discovered.ts';
import { defaultListingWarmupMs, loadNewCoins, newForMs, type NewCoinsResponse } from '../routes/newCoins.ts';
import { defaultIndexParams } from '../../aggregate/indexPrice.ts';
import { defaultIndexSchedule } from '../../aggregate/indexRunner.ts';
import { referenceTicks, storedRows } from '../../aggregate/__tests__/indexReference.ts';
import { useTestApi } from '../../test/support/apiHarness.ts';
import { computeIndex, indexQuotes, trade, type TradeRow } from '../../test/support/harness.ts';
import { quoteUsdPer } from '../../test/support/fxReference.ts';

// One store for the whole file: the loader's tests use it directly, the HTTP tests through the API.
const api = useTestApi({ keyName: 'new-coins-test' });

const hour = 3_600_000;
const day = 24 * hour;
const staleAfterMs = 60_000;
/** The `measured` rule of these tests: the stale limit only (any free space will do; the disk's part is in infra/__tests__/diskSpace.store.test.ts). */
const measured = { staleAfterMs, minFreeBytes: 0 };
const venues = ['binance', 'coinbase', 'kraken'] as const;
// Two discovered assets (infra/catalog/discovered.ts) among the catalog's: a listing is any asset's first print.
const assets = ['bitcoin', 'ethereum', 'solana', 'dogecoin', 'cardano', 'chainlink', 'pepe', 'sui', 'notacoin--binance', 'newtoken--kraken'] as const;
const quotes = ['USDT', 'USD', 'BTC', 'EUR'] as const;
const backfillSql = readFileSync(new URL('../../infra/migrations/0045_asset_first_prints_backfill.sql', import.meta.url), 'utf8');

function expectClose(actual: number, expected: number, what: string) {
  const scale = Math.max(Math.abs(actual), Math.abs(expected));
  expect(Math.abs(actual - expected) <= 1e-9 * scale, `${what}: ${actual} vs ${expected}`).toBe(true);
}

const byText = (x: string, y: string) => (x < y ? -1 : x > y ? 1 : 0);
/** Our order of prints: time, then venue, market and trade id (as the store's argMin keys). */
const printOrder = (a: TradeRow, b: TradeRow) => a.ts - b.ts || byText(a.venue, b.venue) || byText(a.market, b.market) || byText(a.trade_id, b.trade_id);

/** How far back each run computes the index price: its 24 h volume window and then some. */
const indexSinceMs = 26 * hour;

/**
 * The index price /v1/prices serves at `now`, as computeIndex(store, now, indexSinceMs) left it,
 * recomputed from the trades (aggregate/__tests__/indexReference.ts): the latest index row within
 * the 48 h it reads. BTC quotes are valued through the bitcoin index of the same second, other
 * quotes through the FX rates at the end of the computed seconds, as the runner does, recomputed
 * from the trades (test/support/fxReference.ts; no reference rates are stored here).
 */
function expectedPrices(trades: readonly TradeRow[], now: number): Map<string, { price: number; measured: boolean }> {
  const fromS = Math.floor((now - indexSinceMs) / 1000);
  const lastSecond = Math.floor((now - defaultIndexSchedule.lagMs) / 1000) - 1;
  const quoteRate = quoteUsdPer(trades, [], (lastSecond + 1) * 1000);
  const btc = new Map(referenceTicks(trades, 'bitcoin', fromS, lastSecond, { params: defaultIndexParams, usdPer: quoteRate }).map((t) => [t.second, t.price]));
  const prices = new Map<string, { price: number; measured: boolean }>();
  for (const asset of new Set(trades.map((t) => t.asset))) {
    const usdPer = (quote: string, second: number) =>
      quote === 'BTC' ? (asset === 'bitcoin' || asset === 'ethereum' ? undefined : btc.get(second)) : quoteRate(quote);
    const rows = storedRows(referenceTicks(trades, asset, fromS, lastSecond, { params: defaultIndexParams, usdPer }));
    const latest = rows.filter((t) => t.second >= Math.floor(now / 1000) - 2 * 86_400).at(-1);
    if (latest) prices.set(asset, { price: latest.price, measured: latest.status !== 'fail_closed' && now - latest.lastTradeAt <= staleAfterMs });
  }
  return prices;
}

/** The response, recomputed from the trades (the index prices by expectedPrices). */
function recompute(trades: readonly TradeRow[], now: number, warmupMs: number, limit: number, prices: Map<string, { price: number; measured: boolean }>) {
  const venueStart = new Map<string, number>();
  for (const t of trades) venueStart.set(t.venue, Math.min(venueStart.get(t.venue) ?? Infinity, t.ts));
  const listings: NewCoinsResponse['coins'] = [];
  for (const asset of new Set(trades.map((t) => t.asset))) {
    const own = trades.filter((t) => t.asset === asset).sort(printOrder);
    const first = own[0]!;
    if (first.ts < venueStart.get(first.venue)! + warmupMs || first.ts < now - newForMs) continue;
    const firstUsd = own.find((t) => indexQuotes.has(t.quote));

    const price = prices.get(asset)?.price ?? null;
    const measured = prices.get(asset)?.measured ?? false;
    // 1-minute candles since the start of the minute-aligned 24 h.
    const fromS = Math.floor((now - day) / 1000);
    const volume24h = own
      .filter((t) => indexQuotes.has(t.quote) && Math.floor(t.ts / 60_000) * 60 >= fromS)
      .reduce((s, t) => s + t.price * t.quantity, 0);
    // Names and logos as the catalog, or as a discovered asset's id says (written out here: the ticker, in capitals).
    const catalog = findAsset(asset) ?? { ...discoveredAsset(asset)!, symbol: asset.split('--')[0]!, name: asset.split('--')[0]!.toUpperCase(), image: { large: `/assets/coins/${asset}.svg?size=large` } };
    listings.push({
      id: asset,
      symbol: catalog.symbol,
      name: catalog.name,
      image: catalog.image.large,
      listedAt: first.ts,
      firstVenue: first.venue,
      price,
      changeSinceListing: price !== null && firstUsd ? (price / firstUsd.price - 1) * 100 : null,
      volume24h,
      measured,
    });
  }
  listings.sort((a, b) => b.listedAt - a.listedAt || byText(a.id, b.id));
  const since = (ms: number) => listings.filter((l) => l.listedAt >= now - ms).length;
  return {
    coins: listings.slice(0, limit),
    stats: {
      listed24h: since(day),
      listed7d: since(7 * day),
      listed30d: since(newForMs),
      observedSince: trades.length > 0 ? Math.min(...trades.map((t) => t.ts)) : null,
    },
  };
}

function compare(actual: NewCoinsResponse, expected: ReturnType<typeof recompute>, label: string) {
  expect(actual.stats, label).toEqual(expected.stats);
  expect(actual.coins.map((c) => c.id), label).toEqual(expected.coins.map((c) => c.id));
  actual.coins.forEach((c, i) => {
    const e = expected.coins[i]!;
    const { price, changeSinceListing, volume24h, ...rest } = c;
    const { price: ePrice, changeSinceListing: eChange, volume24h: eVolume, ...eRest } = e;
    expect(rest, label).toEqual(eRest);
    for (const [a, b, what] of [[price, ePrice, 'price'], [changeSinceListing, eChange, 'changeSinceListing']] as const) {
      if (b === null) expect(a, `${label} ${c.id} ${what}`).toBeNull();
      else expectClose(a!, b, `${label} ${c.id} ${what}`);
    }
    expectClose(volume24h, eVolume, `${label} ${c.id} volume24h`);
  });
}

/** How long before `now` a trade happened: over 45 days, often in the last days and hours. */
const age = fc.oneof(fc.integer({ min: 0, max: 45 * day }), fc.integer({ min: 0, max: 3 * day }), fc.integer({ min: 0, max: 2 * hour }));

const scenario = fc.record({
  now: fc.integer({ min: Date.UTC(2026, 3, 1), max: Date.UTC(2026, 3, 2) }),
  drafts: fc.array(
    fc.record({
      venue: fc.constantFrom(...venues),
      asset: fc.constantFrom(...assets),
      quote: fc.constantFrom(...quotes),
      age,
      price: fc.double({ min: 1e-3, max: 1e5, noNaN: true, noDefaultInfinity: true }),
      quantity: fc.double({ min: 1e-4, max: 1e3, noNaN: true, noDefaultInfinity: true }),
    }),
    { maxLength: 50 },
  ),
  warmupMs: fc.constantFrom(0, hour, defaultListingWarmupMs),
  limit: fc.constantFrom(1, 3, 200),
  blocks: fc.integer({ min: 1, max: 4 }),
});

test('random trades: listings, prices since listing, volumes and stats equal a recomputation from the trades', async () => {
  const { store } = api;
  await fc.assert(
    fc.asyncProperty(scenario, async ({ now, drafts, warmupMs, limit, blocks }) => {
      for (const table of ['trades', 'asset_first_prints', 'candles_1m', 'market_seconds', 'index_ticks', 'index_ticks_by_time', 'index_summary_10m', 'index_constituents_latest'])
        await store.client.command({ query: 'TRUNCATE TABLE {table:Identifier}', query_params: { table } });
      const trades = drafts.map((d, i) =>
        trade({
          venue: d.venue,
          market: `${(findAsset(d.asset)?.symbol ?? d.asset.split('--')[0]!).toUpperCase()}${d.quote}`,
          asset: d.asset,
          quote: d.quote,
          trade_id: String(i),
          ts: now - d.age,
          price: d.price,
          quantity: d.quantity,
        }),
      );
      // In several blocks, so the first prints arrive as partial states to merge.
      const size = Math.max(1, Math.ceil(trades.length / blocks));
      for (let i = 0; i < trades.length; i += size) await store.insert('trades', trades.slice(i, i + size));
      await computeIndex(store, now, indexSinceMs);

      const expected = recompute(trades, now, warmupMs, limit, expectedPrices(trades, now));
      compare(await loadNewCoins(store, { limit, now, warmupMs, measured }), expected, 'from the view');
      // The migration that backfills first prints of trades stored before the view existed gives the same.
      await store.client.command({ query: 'TRUNCATE TABLE asset_first_prints' });
      await store.client.command({ query: backfillSql });
      compare(await loadNewCoins(store, { limit, now, warmupMs, measured }), expected, 'from the backfill');
    }),
    { numRuns: 20 },
  );
});

test('the first day of a venue is not a wave of listings: first prints inside its warm-up are left out', async () => {
  const { store } = api;
  for (const table of ['trades', 'asset_first_prints', 'candles_1m', 'market_seconds'])
    await store.client.command({ query: 'TRUNCATE TABLE {table:Identifier}', query_params: { table } });
  const now = Date.UTC(2026, 4, 20, 12);
  const start = now - 10 * day;
  const t = (asset: string, venue: string, ts: number, id: string) =>
    trade({ venue, market: `${findAsset(asset)!.symbol.toUpperCase()}USDT`, asset, quote: 'USDT', trade_id: id, ts, price: 10, quantity: 1 });
  await store.insert('trades', [
    t('bitcoin', 'binance', start, '1'), // the venue's first print: we start collecting
    t('ethereum', 'binance', start + 23 * hour, '2'), // inside the 24 h warm-up: an asset we simply had not seen trade yet
    t('solana', 'binance', start + 25 * hour, '3'), // after it: a listing
    t('dogecoin', 'coinbase', now - 2 * day, '4'), // a venue added 2 days ago, dogecoin's first print anywhere: inside that venue's warm-up
    t('bitcoin', 'coinbase', now - day, '5'), // bitcoin on a new venue: not a listing, it traded before
    t('cardano', 'coinbase', now - hour, '6'), // after the new venue's warm-up: a listing
  ]);
  const body = await loadNewCoins(store, { limit: 200, now, warmupMs: defaultListingWarmupMs, measured });
  expect(body.coins.map((c) => [c.id, c.firstVenue])).toEqual([
    ['cardano', 'coinbase'],
    ['solana', 'binance'],
  ]);
  expect(body.stats).toEqual({ listed24h: 1, listed7d: 1, listed30d: 2, observedSince: start });
});

describe('GET /v1/new-coins', () => {
  it('answers coins and stats with the default limit, cached for 5 minutes', async () => {
    const res = await api.get('/v1/new-coins');
    expect(res.status).toBe(200);
    const body = res.json as NewCoinsResponse;
    expect(Object.keys(body)).toEqual(['coins', 'stats']);
    expect(res.headers.get('cache-control')).toBe('private, max-age=300');
    const one = await api.get('/v1/new-coins?limit=1');
    expect(one.status).toBe(200);
    expect((one.json as NewCoinsResponse).coins.length).toBeLessThanOrEqual(1);
  });

  it.each(['0', '201', '1.5', 'ten', '', '-3'])('limit=%j is 400 bad_request naming limit', async (limit) => {
    const res = await api.get(`/v1/new-coins?limit=${limit}`);
    expect(res.status).toBe(400);
    const { error } = res.json as { error: { code: string; message: string } };
    expect(error.code).toBe('bad_request');
    expect(error.message).toContain('limit');
  });
});
