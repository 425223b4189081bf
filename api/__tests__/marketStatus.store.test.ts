import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { catalogAssets, supplyAt, type CatalogAsset } from '../../infra/catalog/catalog.ts';
import { loadMarketStatus, marketStatusResponse } from '../routes/marketStatus.ts';
import { defaultIndexParams } from '../../aggregate/indexPrice.ts';
import { referenceTicks, storedRows } from '../../aggregate/__tests__/indexReference.ts';
import { useTestApi } from '../../test/support/apiHarness.ts';
import { computeIndex, trade, type TradeRow } from '../../test/support/harness.ts';

const DAY = 86_400_000;
const HOUR = 3_600_000;
const MIN = 60_000;
// Whole seconds, a little in the past: the HTTP check, at the real clock, sees the same trades.
const now = Math.floor(Date.now() / 1000) * 1000 - 30_000;
const historyFrom = now - 100 * DAY;

/** BTC, a stablecoin, a wrapped token, and alts: the last one only 30 days old. */
const stablecoin = catalogAssets.find((a) => a.stablecoin)!;
const wrapped = catalogAssets.find((a) => a.wrapped)!;
const alts = catalogAssets.filter((a) => a.id !== 'bitcoin' && !a.stablecoin && !a.wrapped).slice(0, 10);
const young = alts[alts.length - 1]!;
const assets: CatalogAsset[] = [catalogAssets.find((a) => a.id === 'bitcoin')!, stablecoin, wrapped, ...alts];

/** Price of asset i at time t: each with its own 90-day growth and wave, the stablecoin pinned at 1. */
function priceOf(asset: CatalogAsset, i: number, t: number): number {
  if (asset === stablecoin) return 1;
  const base = [60_000, 1, 59_000, 3_000, 150, 600, 0.5, 0.1, 0.4, 7, 20, 30, 5][i] ?? 10;
  const growth = [0.3, 0, 0.3, 0.5, 0.1, -0.2, 0.8, 0.25, 0.35, -0.1, 0.6, 0.2, 0.9][i] ?? 0;
  const x = (t - historyFrom) / (90 * DAY);
  // The wave's phase is counted from `now`, so the basket (up, down, flat) is the same at any hour of the run.
  return base * Math.exp(growth * x) * (1 + 0.04 * Math.sin(((t - now) / DAY) * (1 + i / 3)));
}

/** Boundaries the figures depend on: no trade near them, so a few seconds of clock do not matter. */
function nearBoundary(t: number): boolean {
  return [now - DAY, now - 2 * DAY, now - 90 * DAY].some((b) => Math.abs(t - b) < 20 * MIN);
}

function makeTrades(): TradeRow[] {
  const rows: TradeRow[] = [];
  let id = 0;
  assets.forEach((asset, i) => {
    const from = asset === young ? now - 30 * DAY : historyFrom;
    // Every 3 hours over the history, every 10 minutes around the start of the 90-day window and
    // over the last two days; one trade per second.
    const times: number[] = [];
    for (let t = from; t < now - 2 * DAY; t += 3 * HOUR) times.push(t);
    for (let t = now - 90 * DAY - 2 * HOUR; t < now - 90 * DAY + 2 * HOUR; t += 10 * MIN) if (t >= from) times.push(t);
    for (let t = now - 2 * DAY; t <= now - MIN; t += 10 * MIN) times.push(t);
    for (const base of times) {
      const t = base + i * 1000;
      if (nearBoundary(t)) continue;
      const quote = i % 2 === 0 ? 'USDT' : 'USD';
      rows.push(
        trade({
          venue: 'binance',
          market: `${asset.symbol.toUpperCase()}${quote}`,
          asset: asset.id,
          quote,
          trade_id: String(++id),
          ts: t,
          price: priceOf(asset, i, t),
          // More volume in the last day for some assets, less for others.
          quantity: (1 + (id % 7)) * (t > now - DAY ? 1 + (i % 3) * 0.5 : 1),
        }),
      );
    }
  });
  return rows;
}

// ---- Independent recomputation from the trades ----

const sortedByTime = (rows: readonly TradeRow[]) => [...rows].sort((a, b) => a.ts - b.ts);

/**
 * The second of the latest index row at or before `ref` (recomputed: aggregate/__tests__/indexReference.ts):
 * its market's trade, or the second that market turned stale and the price was carried. Trades
 * are at most 3 h apart, so the 4 h before `ref` hold it.
 */
function indexRowSecond(rows: readonly TradeRow[], asset: string, ref: number): number {
  const refS = Math.floor(ref / 1000);
  return storedRows(referenceTicks(rows, asset, refS - 4 * 3_600, refS, { params: defaultIndexParams })).at(-1)!.second;
}

function expectedStatus(rows: readonly TradeRow[], at: number) {
  const byAsset = new Map<string, TradeRow[]>();
  for (const r of sortedByTime(rows)) if (r.ts <= at) byAsset.set(r.asset, [...(byAsset.get(r.asset) ?? []), r]);
  const priced = assets
    .filter((a) => byAsset.get(a.id)?.some((r) => r.ts >= at - 2 * DAY))
    .map((a) => {
      const mine = byAsset.get(a.id)!;
      const last = mine.at(-1)!;
      const window = mine.filter((r) => r.ts >= at - 2 * DAY);
      const dayAgo = window.filter((r) => r.ts <= at - DAY).at(-1);
      const ref24 = dayAgo ?? window[0]!;
      const cap = last.price * supplyAt(a, at).circulating;
      const cap24 = dayAgo ? dayAgo.price * supplyAt(a, indexRowSecond(rows, a.id, at - DAY) * 1000).circulating : null;
      return { asset: a, price: last.price, change24: (last.price / ref24.price - 1) * 100, cap, cap24, lastTs: last.ts };
    })
    .sort((x, y) => y.cap - x.cap);

  const changes = priced.slice(0, 100).map((p) => p.change24);
  const basket = {
    up: changes.filter((c) => c > 0.5).length,
    down: changes.filter((c) => c < -0.5).length,
    flat: changes.filter((c) => Math.abs(c) <= 0.5).length,
    assets: changes.length,
    flatBandPercent: 0.5,
  };

  const withCap24 = priced.filter((p) => p.cap24 !== null);
  const sumNow = withCap24.reduce((s, p) => s + p.cap, 0);
  const sumThen = withCap24.reduce((s, p) => s + p.cap24!, 0);
  const btc = withCap24.find((p) => p.asset.id === 'bitcoin');
  const marketCapChange24h = sumThen > 0 ? (sumNow / sumThen - 1) * 100 : null;
  const btcSharePointsChange24h = btc ? (100 * btc.cap) / sumNow - (100 * btc.cap24!) / sumThen : null;

  const lastMinute = Math.floor(at / MIN) * MIN;
  let volNow = 0;
  let volBefore = 0;
  for (const a of assets) {
    const mine = byAsset.get(a.id) ?? [];
    const minuteOf = (r: TradeRow) => Math.floor(r.ts / MIN) * MIN;
    const cur = mine.filter((r) => minuteOf(r) > lastMinute - DAY && minuteOf(r) <= lastMinute).reduce((s, r) => s + r.price * r.quantity, 0);
    const prev = mine.filter((r) => minuteOf(r) > lastMinute - 2 * DAY && minuteOf(r) <= lastMinute - DAY).reduce((s, r) => s + r.price * r.quantity, 0);
    if (cur > 0 && prev > 0) {
      volNow += cur;
      volBefore += prev;
    }
  }
  const volumeChange24h = volBefore > 0 ? (volNow / volBefore - 1) * 100 : null;

  const btcTrades = byAsset.get('bitcoin')!;
  const start = btcTrades.find((r) => r.ts >= Math.floor((at - 90 * DAY) / 1000) * 1000)!;
  const startS = Math.floor(start.ts / 1000) * 1000;
  const refOf = (id: string) => byAsset.get(id)?.find((r) => r.ts >= startS && r.ts < startS + HOUR);
  const btcPerf = priced.find((p) => p.asset.id === 'bitcoin')!.price / refOf('bitcoin')!.price - 1;
  const candidates = priced.filter((p) => p.asset.id !== 'bitcoin' && !p.asset.stablecoin && !p.asset.wrapped).slice(0, 50);
  const compared = candidates.filter((p) => refOf(p.asset.id));
  const outperforming = compared.filter((p) => p.price / refOf(p.asset.id)!.price - 1 > btcPerf).length;
  const score = Math.round((100 * outperforming) / compared.length);
  return {
    basket,
    marketCapChange24h,
    btcSharePointsChange24h,
    volumeChange24h,
    altcoinSeason: {
      score,
      label: score >= 75 ? 'Altcoin Season' : score <= 25 ? 'Bitcoin Season' : 'Neutral',
      windowDays: (at - startS) / DAY,
      assets: compared.length,
      outperforming,
      excludedShortHistory: candidates.length - compared.length,
    },
    asOf: new Date(Math.max(...priced.map((p) => p.lastTs))).toISOString(),
  };
}

// ---- Tests ----

const rows: TradeRow[] = makeTrades();

// One store for the whole file: the loader's tests read it directly, the HTTP test through the API.
const api = useTestApi({
  keyName: 'market-status-test',
  seed: async (store) => {
    await store.insert('trades', rows);
    // The index price of the whole history (one market per asset: the index is its last trade, carried while stale).
    await computeIndex(store, now, 101 * DAY);
  },
});

/** The flags of infra/catalog/assets.json, read here without the catalog module the route uses. */
const catalogFlags = new Map(
  (JSON.parse(readFileSync(new URL('../../infra/catalog/assets.json', import.meta.url), 'utf8')) as { id: string; stablecoin: boolean; wrapped: boolean }[]).map((a) => [a.id, a]),
);

describe('market status', () => {
  it('the test universe has what it must: a stablecoin, a wrapped token, alts', () => {
    // A stablecoin as the catalogue file flags it, traded at 1 throughout: the flat one of the basket.
    expect(catalogFlags.get(stablecoin.id)).toMatchObject({ stablecoin: true, wrapped: false });
    const stableTrades = rows.filter((r) => r.asset === stablecoin.id);
    expect(stableTrades.length).toBeGreaterThan(0);
    expect(new Set(stableTrades.map((r) => r.price))).toEqual(new Set([1]));
    // A wrapped token as the catalogue file flags it: out of the altcoin season, in the basket.
    expect(catalogFlags.get(wrapped.id)).toMatchObject({ stablecoin: false, wrapped: true });
    // Ten distinct alts, none of them bitcoin, a stablecoin or a wrapped token.
    expect(new Set(alts.map((a) => a.id)).size).toBe(10);
    expect(alts.filter((a) => a.id === 'bitcoin' || catalogFlags.get(a.id)?.stablecoin !== false || catalogFlags.get(a.id)?.wrapped !== false)).toEqual([]);
    // Every asset of the universe traded, and only those; the young alt only over its last 30 days.
    expect([...new Set(rows.map((r) => r.asset))].sort()).toEqual(['bitcoin', stablecoin.id, wrapped.id, ...alts.map((a) => a.id)].sort());
    expect(Math.min(...rows.filter((r) => r.asset === young.id).map((r) => r.ts))).toBeGreaterThanOrEqual(now - 30 * DAY);
  });

  it('recomputes basket, 24 h changes and altcoin season from the trades (full 90-day window)', async () => {
    const body = marketStatusResponse.parse(await loadMarketStatus(api.store, now));
    const want = expectedStatus(rows, now);
    expect(body.basket).toEqual(want.basket);
    expect(body.basket.up).toBeGreaterThan(0);
    expect(body.basket.down).toBeGreaterThan(0);
    expect(body.basket.flat).toBeGreaterThan(0); // the stablecoin
    expect(body.marketCapChange24h).toBeCloseTo(want.marketCapChange24h!, 9);
    expect(body.btcSharePointsChange24h).toBeCloseTo(want.btcSharePointsChange24h!, 9);
    expect(body.volumeChange24h).toBeCloseTo(want.volumeChange24h!, 9);
    expect(body.altcoinSeason).toMatchObject({
      score: want.altcoinSeason.score,
      label: want.altcoinSeason.label,
      fullWindow: true,
      assets: want.altcoinSeason.assets,
      outperforming: want.altcoinSeason.outperforming,
      excludedShortHistory: 1, // the young alt
    });
    expect(body.altcoinSeason.windowDays).toBeCloseTo(want.altcoinSeason.windowDays, 2);
    expect(body.altcoinSeason.assets).toBe(alts.length - 1);
    expect(body.asOf).toBe(want.asOf);
  });

  it('says so when our history is shorter than 90 days, and uses what there is', async () => {
    const early = historyFrom + 10 * DAY + 30 * MIN;
    const body = marketStatusResponse.parse(await loadMarketStatus(api.store, early));
    const want = expectedStatus(rows, early);
    expect(body.altcoinSeason.fullWindow).toBe(false);
    expect(body.altcoinSeason.windowDays).toBeCloseTo(want.altcoinSeason.windowDays, 2);
    expect(body.altcoinSeason.windowDays).toBeLessThan(11);
    expect(body.altcoinSeason).toMatchObject({ score: want.altcoinSeason.score, assets: want.altcoinSeason.assets, outperforming: want.altcoinSeason.outperforming });
    // The young alt did not exist yet: it is simply not priced, not "excluded for short history".
    expect(body.altcoinSeason.excludedShortHistory).toBe(0);
  });

  it('answers with nulls, not errors, before anything was measured', async () => {
    const body = marketStatusResponse.parse(await loadMarketStatus(api.store, historyFrom - DAY));
    expect(body).toMatchObject({
      basket: { up: 0, down: 0, flat: 0, assets: 0 },
      marketCapChange24h: null,
      volumeChange24h: null,
      btcSharePointsChange24h: null,
      altcoinSeason: { score: null, label: null, windowDays: null, assets: 0 },
    });
  });

  describe('GET /v1/market-status', () => {
    it('serves the same figures over HTTP, with a key', async () => {
      expect((await api.getWithoutKey('/v1/market-status')).status).toBe(401);
      const res = await api.get('/v1/market-status');
      expect(res.status).toBe(200);
      const body = marketStatusResponse.parse(res.json);
      const want = expectedStatus(rows, now);
      expect(body.basket).toEqual(want.basket);
      expect(body.altcoinSeason.score).toBe(want.altcoinSeason.score);
    });
  });
});
