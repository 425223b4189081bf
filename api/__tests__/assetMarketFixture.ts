// Trades for the tests of the asset-market routes (coins, coin, chart, global, categories), and an
// independent recomputation of every figure from them in plain TypeScript.
//
// Time is fixed at T (the tests fake Date), so every window and bucket is deterministic.
// Prices are multiples of 1/4 and quantities of 1/8: products and sums are exact in binary, so the
// VWAPs computed here equal the store's whatever the summation order. The index price itself is
// recomputed by aggregate/__tests__/indexReference.ts; tests store these trades, then run
// computeIndex(store, T) (useFixtureApi does both).
import { defaultIndexParams } from '../../aggregate/indexPrice.ts';
import { referenceTicks, storedRows } from '../../aggregate/__tests__/indexReference.ts';
import { catalogAssets, findAsset, supplyAt } from '../../infra/catalog/catalog.ts';
import type { Store } from '../../infra/store.ts';
import { useTestApi, type TestApi } from '../../test/support/apiHarness.ts';
import { computeIndex, indexQuotes, trade, type TradeRow } from '../../test/support/harness.ts';

export const T = Date.UTC(2026, 5, 15, 10, 30, 17, 250);
export const minute = 60_000;
export const hour = 60 * minute;
export const day = 24 * hour;
const sNow = Math.floor(T / 1000);

let seq = 0;
const markets = {
  bitcoin: {
    usdt: ['binance', 'BTCUSDT', 'USDT'],
    usdc: ['binance', 'BTCUSDC', 'USDC'],
    usd: ['coinbase', 'BTC-USD', 'USD'],
    eur: ['kraken', 'XBTEUR', 'EUR'],
  },
} as const;
type MarketSpec = readonly [venue: string, market: string, quote: string];

function at(asset: string, [venue, market, quote]: MarketSpec, ts: number, price: number, quantity: number): TradeRow {
  return trade({ venue, market, asset, quote, trade_id: `t${String(seq++).padStart(4, '0')}`, ts, price, quantity });
}

const btc = markets.bitcoin;
const lastSecond = (sNow - 3) * 1000;

export const fixtureTrades: TradeRow[] = [
  // bitcoin: first index trade 400 days ago (the all-time low); an older EUR trade is not in the index.
  at('bitcoin', btc.eur, T - 401 * day, 1, 1),
  at('bitcoin', btc.usd, T - 400 * day, 20_000.5, 1),
  // 1y: the daily bucket 368 days ago is the latest starting at or before now - 365 d (two markets).
  at('bitcoin', btc.usdt, T - 368 * day, 30_000.25, 0.5),
  at('bitcoin', btc.usd, T - 368 * day + 10 * minute, 30_100.75, 1.5),
  at('bitcoin', btc.usdt, T - 362 * day, 31_000, 1),
  // 30d: the hour of now - 30 d - 3 h (two markets), then a later hour that is not the reference.
  at('bitcoin', btc.usdt, T - 30 * day - 3 * hour, 60_000.5, 0.25),
  at('bitcoin', btc.usd, T - 30 * day - 3 * hour + 5 * minute, 60_010.25, 0.75),
  at('bitcoin', btc.usdt, T - 30 * day + 2 * hour, 61_000, 1),
  // 14d and 7d references; one trade after each window start.
  at('bitcoin', btc.usdc, T - 14 * day - 5 * hour, 70_000, 1),
  at('bitcoin', btc.usdt, T - 7 * day - 2 * hour, 80_000.5, 0.5),
  at('bitcoin', btc.usdt, T - 7 * day + hour, 81_000, 1),
  // The all-time high, reached twice: the first time counts. A higher EUR trade is not in the index.
  at('bitcoin', btc.usdt, T - 10 * day, 150_000, 0.125),
  at('bitcoin', btc.usd, T - 9 * day, 150_000, 0.25),
  at('bitcoin', btc.eur, T - 9 * day, 200_000, 1),
  // Sparkline hours, with hours between them that have no trade.
  at('bitcoin', btc.usdt, T - 100 * hour, 90_000, 0.5),
  at('bitcoin', btc.usdc, T - 50 * hour, 92_000.5, 0.25),
  // Around now - 24 h: the reference is the latest second at or before it (two markets, one second).
  at('bitcoin', btc.usdt, (sNow - 86_400 - 40) * 1000 + 200, 95_000.5, 0.375),
  at('bitcoin', btc.usd, (sNow - 86_400 - 40) * 1000 + 700, 95_100.25, 0.625),
  // In the 24 h volume (its second is after now - 24 h), not in the 24 h high/low (its minute starts before).
  at('bitcoin', btc.usdt, (sNow - 86_400 + 40) * 1000, 97_000, 1),
  // The 24 h high and low.
  at('bitcoin', btc.usdt, T - 5 * hour, 101_000.75, 0.5),
  at('bitcoin', btc.usd, T - 3 * hour, 98_000.25, 0.5),
  // Around now - 1 h.
  at('bitcoin', btc.usdt, (sNow - 3600 - 100) * 1000, 99_000.25, 1),
  at('bitcoin', btc.usdt, (sNow - 3600 + 100) * 1000, 99_500, 1),
  // Earlier second, then the latest second: three index markets and a EUR one.
  at('bitcoin', btc.usdt, (sNow - 13) * 1000 + 5, 99_500, 2),
  at('bitcoin', btc.usdt, lastSecond + 100, 100_000.25, 0.5),
  at('bitcoin', btc.usdc, lastSecond + 400, 100_010.5, 0.25),
  at('bitcoin', btc.usd, lastSecond + 900, 99_990.75, 1.125),
  at('bitcoin', btc.eur, lastSecond + 950, 90_000, 3),

  // ethereum: listed 2 h ago (history shorter than every window); last trade 10 min ago, so not measured.
  at('ethereum', ['binance', 'ETHUSDT', 'USDT'], T - 2 * hour, 3_000.5, 4),
  at('ethereum', ['binance', 'ETHUSDT', 'USDT'], T - 2 * hour + 10, 3_001, 2),
  at('ethereum', ['binance', 'ETHUSDT', 'USDT'], T - 10 * minute, 3_100.25, 1.5),

  // solana: no trade in the last 24 h (priced from 30 h ago), and a trade 40 days ago.
  at('solana', ['binance', 'SOLUSDT', 'USDT'], T - 40 * day, 140, 1),
  at('solana', ['binance', 'SOLUSDT', 'USDT'], T - 30 * hour, 150.25, 10),

  // tether: quoted in USD; 8 days, 26 hours and seconds ago.
  at('tether', ['coinbase', 'USDT-USD', 'USD'], T - 8 * day, 1.000244140625, 500),
  at('tether', ['coinbase', 'USDT-USD', 'USD'], T - 26 * hour, 0.999755859375, 1_000),
  at('tether', ['coinbase', 'USDT-USD', 'USD'], T - 5_000, 1, 1_000),

  // cardano: last trade 3 days ago: no price now, history for charts.
  at('cardano', ['binance', 'ADAUSDT', 'USDT'], T - 3 * day, 0.5, 100),

  // dogecoin: only a EUR market: never priced.
  at('dogecoin', ['kraken', 'DOGEEUR', 'EUR'], T - 2_000, 0.125, 1_000),

  // litecoin: more than 1,000 days of history (weekly points for range=max).
  at('litecoin', ['binance', 'LTCUSDT', 'USDT'], T - 1_200 * day, 50, 2),
  at('litecoin', ['binance', 'LTCUSDT', 'USDT'], T - 1_100 * day, 60.5, 2),
  at('litecoin', ['binance', 'LTCUSDT', 'USDT'], T - 20 * hour, 80.25, 4),
];

const indexTrades = (asset: string) => fixtureTrades.filter((t) => t.asset === asset && indexQuotes.has(t.quote));
const byTime = (a: TradeRow, b: TradeRow) => a.ts - b.ts || (a.trade_id < b.trade_id ? -1 : a.trade_id > b.trade_id ? 1 : 0);

interface Bucket {
  start: number;
  notional: number;
  volume: number;
  high: number;
  low: number;
  close: number;
  lastAt: number;
}

/** Index buckets of `asset` (start = floor(ts / size) * size, or Monday 00:00 UTC for weeks), oldest first. */
export function buckets(asset: string, size: number | 'week'): Bucket[] {
  const startOf = (ts: number) => {
    if (size !== 'week') return Math.floor(ts / size) * size;
    const dayIndex = Math.floor(ts / day);
    // 1970-01-01 was a Thursday: (dayIndex + 3) % 7 days since Monday.
    return (dayIndex - ((dayIndex + 3) % 7)) * day;
  };
  const map = new Map<number, Bucket>();
  for (const t of [...indexTrades(asset)].sort(byTime)) {
    const start = startOf(t.ts);
    const b = map.get(start) ?? { start, notional: 0, volume: 0, high: -Infinity, low: Infinity, close: 0, lastAt: 0 };
    b.notional += t.price * t.quantity;
    b.volume += t.quantity;
    b.high = Math.max(b.high, t.price);
    b.low = Math.min(b.low, t.price);
    b.close = t.price;
    b.lastAt = Math.max(b.lastAt, t.ts);
    map.set(start, b);
  }
  return [...map.values()].sort((a, b) => a.start - b.start);
}

const vwap = (b: Bucket) => b.notional / b.volume;

/** A price at a time (unix ms): an index row's second, or a bucket's start with its VWAP. */
interface Point {
  start: number;
  price: number;
}
const points = (list: Bucket[]): Point[] => list.map((b) => ({ start: b.start, price: vwap(b) }));

/** The latest point at or before `ref` among `list`, else the oldest: the reference rule. */
function reference(list: Point[], ref: number): { price: number; at: number } {
  const before = list.filter((b) => b.start <= ref);
  const chosen = before.length > 0 ? before.at(-1)! : list[0]!;
  return { price: chosen.price, at: chosen.start };
}

const indexRowsOf = new Map<string, (Point & { lastAt: number; volumeUsd: number })[]>();
/**
 * The index rows computeIndex(store, T) stores for `id` (7 days of backfill up to T - 2 s),
 * recomputed from the trades: one per second in which the index traded or changed.
 */
function indexRows(id: string): (Point & { lastAt: number; volumeUsd: number })[] {
  if (!indexRowsOf.has(id)) {
    const ticks = referenceTicks(fixtureTrades, id, sNow - 7 * 86_400, sNow - 3, { params: defaultIndexParams });
    indexRowsOf.set(id, storedRows(ticks).map((t) => ({ start: t.second * 1000, price: t.price, lastAt: t.lastTradeAt, volumeUsd: t.volumeUsd })));
  }
  return indexRowsOf.get(id)!;
}

export interface Expected {
  id: string;
  price: number;
  updatedAt: number;
  volume24h: number;
  high24h: number;
  low24h: number;
  reference: Record<'1h' | '24h' | '7d' | '14d' | '30d' | '1y', { price: number; at: number }>;
  change: Record<'1h' | '24h' | '7d' | '14d' | '30d' | '1y', number>;
  ranges: Record<'24h' | '7d' | '30d' | '1y', { high: number; low: number }>;
  ath: { price: number; at: number };
  atl: { price: number; at: number };
  observedSince: number;
  circulating: number;
  total: number;
  max: number | null;
  supplySource: string;
  marketCap: number;
  fdv: number;
  marketCapChange24h: number;
}

/** Every figure of a priced asset at T, recomputed from the trades; undefined when it has no price. */
export function expected(id: string): Expected | undefined {
  const trades = indexTrades(id);
  const seconds = indexRows(id).filter((b) => b.start >= (sNow - 2 * 86_400) * 1000 && b.start <= sNow * 1000);
  if (seconds.length === 0) return undefined;
  const latest = seconds.at(-1)!;
  const price = latest.price;
  const window = (list: Bucket[], fromMs: number) => list.filter((b) => b.start >= fromMs && b.start <= sNow * 1000);
  // Hourly and daily buckets starting after the window's start (minute buckets: at or after it).
  const after = (list: Bucket[], fromMs: number) => list.filter((b) => b.start > fromMs && b.start <= sNow * 1000);
  const hours = after(buckets(id, hour), (sNow - 31 * 86_400) * 1000);
  const days = after(buckets(id, day), (sNow - 395 * 86_400) * 1000);
  const minutes24h = window(buckets(id, minute), (sNow - 86_400) * 1000);
  const ref = {
    '1h': reference(seconds, (sNow - 3600) * 1000),
    '24h': reference(seconds, (sNow - 86_400) * 1000),
    '7d': reference(points(hours), (sNow - 7 * 86_400) * 1000),
    '14d': reference(points(hours), (sNow - 14 * 86_400) * 1000),
    '30d': reference(points(hours), (sNow - 30 * 86_400) * 1000),
    '1y': reference(points(days), (sNow - 365 * 86_400) * 1000),
  };
  const extremes = (list: Bucket[]) =>
    list.length === 0 ? { high: price, low: price } : { high: Math.max(...list.map((b) => b.high)), low: Math.min(...list.map((b) => b.low)) };
  const sorted = [...trades].sort(byTime);
  const maxPrice = Math.max(...trades.map((t) => t.price));
  const minPrice = Math.min(...trades.map((t) => t.price));
  const asset = findAsset(id)!;
  const supply = supplyAt(asset, T);
  const marketCap = price * supply.circulating;
  return {
    id,
    price,
    updatedAt: latest.lastAt,
    volume24h: seconds.filter((b) => b.start > (sNow - 86_400) * 1000).reduce((sum, b) => sum + b.volumeUsd, 0),
    high24h: extremes(minutes24h).high,
    low24h: extremes(minutes24h).low,
    reference: ref,
    change: Object.fromEntries(Object.entries(ref).map(([w, r]) => [w, (price / r.price - 1) * 100])) as Expected['change'],
    ranges: {
      '24h': extremes(minutes24h),
      '7d': extremes(hours.filter((b) => b.start > (sNow - 7 * 86_400) * 1000)),
      '30d': extremes(hours.filter((b) => b.start > (sNow - 30 * 86_400) * 1000)),
      '1y': extremes(days.filter((b) => b.start > (sNow - 365 * 86_400) * 1000)),
    },
    ath: { price: maxPrice, at: sorted.find((t) => t.price === maxPrice)!.ts },
    atl: { price: minPrice, at: sorted.find((t) => t.price === minPrice)!.ts },
    observedSince: sorted[0]!.ts,
    circulating: supply.circulating,
    total: supply.total,
    max: supply.max,
    supplySource: supply.source,
    marketCap,
    fdv: price * (supply.max ?? supply.total),
    marketCapChange24h: (marketCap / (ref['24h'].price * supplyAt(asset, ref['24h'].at).circulating) - 1) * 100,
  };
}

/** The assets of the fixture that have a price at T, largest market cap first (ties: catalog order). */
export function expectedRanking(): Expected[] {
  const order = (id: string) => catalogAssets.findIndex((a) => a.id === id);
  return catalogAssets
    .map((a) => expected(a.id))
    .filter((e): e is Expected => e !== undefined)
    .sort((a, b) => b.marketCap - a.marketCap || order(a.id) - order(b.id));
}

/** Cap at the reference of a window, when the reference is at or before T - window (else undefined). */
export function capBefore(e: Expected, window: '24h' | '7d', windowMs: number): number | undefined {
  const r = e.reference[window];
  return r.at <= T - windowMs ? r.price * supplyAt(findAsset(e.id)!, r.at).circulating : undefined;
}

/** Percent change of the summed cap over the assets with a cap before the window. */
export function universeChange(list: Expected[], window: '24h' | '7d', windowMs: number): number {
  const universe = list.filter((e) => capBefore(e, window, windowMs) !== undefined);
  if (universe.length === 0) return 0;
  const now = universe.reduce((s, e) => s + e.marketCap, 0);
  const then = universe.reduce((s, e) => s + capBefore(e, window, windowMs)!, 0);
  return (now / then - 1) * 100;
}

/** Relative closeness for sums whose order of addition differs. */
export function close(actual: number, wanted: number, tolerance = 1e-12): boolean {
  return actual === wanted || Math.abs(actual - wanted) <= tolerance * Math.max(Math.abs(actual), Math.abs(wanted));
}

/** Deep equality where numbers may differ in the last bits (sums or products taken in another order). */
export function closeTo(actual: unknown, wanted: unknown, path = '$'): string[] {
  if (typeof wanted === 'number' && typeof actual === 'number') return close(actual, wanted) ? [] : [`${path}: ${actual} != ${wanted}`];
  if (wanted === null || typeof wanted !== 'object') return Object.is(actual, wanted) ? [] : [`${path}: ${JSON.stringify(actual)} != ${JSON.stringify(wanted)}`];
  if (actual === null || typeof actual !== 'object' || Array.isArray(actual) !== Array.isArray(wanted)) return [`${path}: ${JSON.stringify(actual)} != ${JSON.stringify(wanted)}`];
  const keys = new Set([...Object.keys(actual), ...Object.keys(wanted)]);
  return [...keys].flatMap((k) => closeTo((actual as Record<string, unknown>)[k], (wanted as Record<string, unknown>)[k], `${path}.${k}`));
}

/** FX reference rows (units per USD) for the value currencies: today's and 40 days old; none a year back. */
export function referenceRates(currencies: readonly string[]) {
  const rows = [];
  const perUsd: Record<string, [old: number, current: number]> = { ars: [1_000, 1_200.5], brl: [5, 5.25], sek: [10, 10.5], eur: [0.875, 0.9] };
  for (const c of currencies) {
    rows.push({ date: new Date(T - 40 * day).toISOString().slice(0, 10), currency: c, per_usd: perUsd[c]![0], source: 'test', imported_at: T });
    rows.push({ date: new Date(T).toISOString().slice(0, 10), currency: c, per_usd: perUsd[c]![1], source: 'test', imported_at: T });
  }
  return rows;
}

/**
 * The API over this fixture, for a test file: the trades stored, their index price computed up to
 * T, the reference rates of `currencies`, and Date fixed at T until the file ends.
 */
export function useFixtureApi(keyName: string, currencies: readonly string[] = [], more?: (store: Store) => Promise<void>): TestApi {
  return useTestApi({
    keyName,
    now: T,
    seed: async (store) => {
      await store.insert('trades', fixtureTrades);
      await computeIndex(store, T);
      if (currencies.length > 0) await store.insert('fx_reference_rates', referenceRates(currencies));
      await more?.(store);
    },
  });
}
