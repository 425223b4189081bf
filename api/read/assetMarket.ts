import { readFileSync } from 'node:fs';
import { supplyAt, type CatalogAsset } from '../../infra/catalog/catalog.ts';
import { assetUniverse } from '../../infra/catalog/assetUniverse.ts';
import { circulatingUnknown } from '../../infra/catalog/discovered.ts';
import { usdQuotes } from '../../aggregate/currency/currencies.ts';
import { latestIndexPrices, percentChange, type LatestIndexPrice, type MeasuredRule, type PricePoint } from '../../aggregate/indexPrices/latestIndexPrices.ts';
import type { StoreCalls } from '../../infra/store.ts';
import { mapInTurns } from '../../infra/turns.ts';
import { liveBucketsFrom, loadLongWindows, LongWindowCache, type LongWindowRow } from './assetLongWindows.ts';

const assetMarketSql = readFileSync(new URL('./assetMarket.sql', import.meta.url), 'utf8');

const hourMs = 3_600_000;
const dayMs = 24 * hourMs;

/**
 * How many assets the API's thread maps between two turns of its event loop (infra/turns.ts). In one
 * piece, the universe demo's snapshot (about 4,000 assets) held the thread for 100-200 ms every 5 s
 * under a profiler, and cached answers waited for it (test/bench/RESULTS.md, 2026-12-05).
 */
const assetsPerTurn = 250;

/** The windows of the price changes, and their length. */
export const changeWindowMs = { '1h': hourMs, '24h': dayMs, '7d': 7 * dayMs, '14d': 14 * dayMs, '30d': 30 * dayMs, '1y': 365 * dayMs } as const;
export type ChangeWindow = keyof typeof changeWindowMs;
/** The windows of the high/low ranges (price_stats.ranges of the coin profile). */
export const rangeWindows = ['24h', '7d', '30d', '1y'] as const;
export type RangeWindow = (typeof rangeWindows)[number];

export interface AssetMarket {
  asset: CatalogAsset;
  /** 1-based by marketCap; assets without a price ranked after, in catalog order. */
  rank: number;
  /** USD index price (latest second with trades in the 48 h before now), null when none. */
  price: number | null;
  /** unix ms of the last trade behind price. */
  updatedAt: number | null;
  /** LatestIndexPrice.measured; false without a price. */
  measured: boolean;
  /** USD, index-included markets, the seconds of the last 24 h. */
  volume24h: number;
  high24h: number | null;
  low24h: number | null;
  /** percent, price against reference[window]. */
  change: Record<ChangeWindow, number | null>;
  circulatingSupply: number;
  totalSupply: number;
  maxSupply: number | null;
  supplySource: string;
  /** price x circulating supply. */
  marketCap: number | null;
  /** price x max supply, or x total supply when there is no max. */
  fullyDilutedValuation: number | null;
  /** percent, marketCap against the cap at reference['24h'] (its price x the supply at its time). */
  marketCapChange24h: number | null;
  /** What each change compares with (see loadAssetMarkets); null when price is null. */
  reference: Record<ChangeWindow, PricePoint | null>;
  /** Highest and lowest trade price on the index markets per window; null when price is null. */
  ranges: Record<RangeWindow, { high: number; low: number } | null>;
  /** All-time (since we started measuring) highest and lowest trade on the index markets, first reached; null when we never measured one. */
  ath: PricePoint | null;
  atl: PricePoint | null;
  /** unix ms of our first trade of the asset on an index market; null when we never measured one. */
  observedSince: number | null;
}

/** An asset with a price: every figure derived from the price is known (see isPriced). */
export type PricedMarket = AssetMarket & {
  price: number;
  updatedAt: number;
  high24h: number;
  low24h: number;
  change: Record<ChangeWindow, number>;
  marketCap: number;
  fullyDilutedValuation: number;
  marketCapChange24h: number;
  reference: Record<ChangeWindow, PricePoint>;
  ranges: Record<RangeWindow, { high: number; low: number }>;
  ath: PricePoint;
  atl: PricePoint;
  observedSince: number;
};

/**
 * Whether the asset has a price and, with it, every derived figure. assetMarket.sql gives a priced
 * asset all of them (its recent trades fall in every window); should one ever be missing, the
 * asset is served as unpriced rather than with an invented figure.
 */
export function isPriced(m: AssetMarket): m is PricedMarket {
  // Without arrays: it runs for every asset of every snapshot, in the API's thread.
  return (
    m.price !== null &&
    m.updatedAt !== null &&
    m.high24h !== null &&
    m.low24h !== null &&
    m.marketCap !== null &&
    m.fullyDilutedValuation !== null &&
    m.marketCapChange24h !== null &&
    m.ath !== null &&
    m.atl !== null &&
    m.observedSince !== null &&
    noneNull(m.change) &&
    noneNull(m.reference) &&
    noneNull(m.ranges)
  );
}

function noneNull(record: Readonly<Record<string, unknown>>): boolean {
  for (const key in record) if (record[key] === null) return false;
  return true;
}

/** A tuple (value, unix seconds or ms) as the store returns it. */
type StoredPoint = [number, number];

/** A row of assetMarket.sql: the windowed fields are null when the asset has no trade in them. */
export interface AssetMarketRow {
  asset: string;
  high24h: number | null;
  low24h: number | null;
  ref7d: StoredPoint | null;
  ref14d: StoredPoint | null;
  ref30d: StoredPoint | null;
  high7d: number | null;
  low7d: number | null;
  high30d: number | null;
  low30d: number | null;
  ref1y: StoredPoint | null;
  high1y: number | null;
  low1y: number | null;
  ath: StoredPoint;
  atl: StoredPoint;
  firstTradeAtMs: number;
}

const seconds = (ms: number) => Math.floor(ms / 1000);
const fromSeconds = (p: StoredPoint | null): PricePoint | null => (p ? { price: p[0], at: p[1] * 1000 } : null);
const percent = (now: number, then: number | undefined | null) => (then ? percentChange(now, then) : null);

/** A row of assetMarket.sql: the live hourly and daily buckets' part is null when the asset has none. */
interface LiveRow {
  asset: string;
  high24h: number | null;
  low24h: number | null;
  oldestHour: StoredPoint | null;
  hourHigh: number | null;
  hourLow: number | null;
  oldestDay: StoredPoint | null;
  dayHigh: number | null;
  dayLow: number | null;
  ath: StoredPoint;
  atl: StoredPoint;
  firstTradeAtMs: number;
}

const highest = (a: number | null | undefined, b: number | null) => (a == null ? b : b == null ? a : Math.max(a, b));
const lowest = (a: number | null | undefined, b: number | null) => (a == null ? b : b == null ? a : Math.min(a, b));

/**
 * An asset's windows over its long buckets and its live ones together: a reference is the long
 * part's when it has a bucket at or before the reference time (the live buckets are all after
 * it), else the oldest bucket of both; a range spans both.
 */
function withLongWindows(live: LiveRow, long: LongWindowRow | undefined): AssetMarketRow {
  const oldestHour = long?.oldestHour ?? live.oldestHour;
  const oldestDay = long?.oldestDay ?? live.oldestDay;
  return {
    asset: live.asset,
    high24h: live.high24h,
    low24h: live.low24h,
    ref7d: long?.hasRef7d ? long.ref7d : oldestHour,
    ref14d: long?.hasRef14d ? long.ref14d : oldestHour,
    ref30d: long?.hasRef30d ? long.ref30d : oldestHour,
    high7d: highest(long?.high7d, live.hourHigh),
    low7d: lowest(long?.low7d, live.hourLow),
    high30d: highest(long?.high30d, live.hourHigh),
    low30d: lowest(long?.low30d, live.hourLow),
    ref1y: long?.hasRef1y ? long.ref1y : oldestDay,
    high1y: highest(long?.high1y, live.dayHigh),
    low1y: lowest(long?.low1y, live.dayLow),
    ath: live.ath,
    atl: live.atl,
    firstTradeAtMs: live.firstTradeAtMs,
  };
}

/**
 * What a snapshot of `assets` at `now` derives beside the latest index prices: assetMarket.sql's
 * rows with the long windows before their live buckets, from `longWindows` (read once an hour)
 * or, without it, read now (assetLongWindows.ts).
 */
export async function loadAssetMarketRows(store: StoreCalls, assets: readonly string[], now: number, longWindows?: LongWindowCache): Promise<AssetMarketRow[]> {
  const nowS = seconds(now);
  const live = liveBucketsFrom(now);
  const [rows, long] = await Promise.all([
    store.rows<LiveRow>(assetMarketSql, {
      assets,
      usd_quotes: usdQuotes,
      now_s: nowS,
      day_from_s: nowS - 86_400,
      live_hour_from_s: live.hour,
      live_day_from_s: live.day,
    }),
    longWindows ? longWindows.rowsOf(store, assets, now) : loadLongWindows(store, assets, now),
  ]);
  return rows.map((r) => withLongWindows(r, long.get(r.asset)));
}

/**
 * The market snapshot of every catalog asset at `now`, in rank order. Every part reads a bounded
 * window (assetMarket.sql), so the cost does not grow with our history:
 * - price, measured, volume24h and the 1h and 24h references: latestIndexPrices (the latest second
 *   computed in the 48 h up to now, as /v1/prices); an asset with none has price null and every
 *   figure derived from it null (ath, atl and observedSince stay known).
 * - change[w]: percent against the index price at or before now - w: for 1h and 24h the
 *   references of latestIndexPrices, for
 *   7d, 14d and 30d the volume-weighted price of the latest hourly bucket starting at or before it
 *   (within 31 days), for 1y that of the latest daily bucket (within 395 days). When our history is
 *   shorter than the window (or has a gap there), the oldest point read stands in, as in /v1/prices.
 * - high24h/low24h and ranges: the extremes of the trades on the index markets (the index candles'
 *   high and low) in the 1-minute (24h) buckets starting in the window, or the hourly (7d, 30d) or
 *   daily (1y) buckets starting after its start. An asset priced from a second older than 24 h did
 *   not trade since: its index price held, so its 24 h high and low are that price.
 * - the hourly and daily buckets before the live ones (the current hour and the one before, today
 *   and yesterday) come from `options.longWindows` when given: read once an hour
 *   (assetLongWindows.ts), so a trade older than the live buckets shows there at the next hour.
 * - ath/atl: the highest and lowest such trade since we started measuring (asset_price_extremes,
 *   kept as trades arrive: for a `now` in the past it includes the trades after it).
 * - supply: the catalog's supplyAt(now); marketCapChange24h values the reference with supplyAt of
 *   the reference's time.
 */
export async function loadAssetMarkets(store: StoreCalls, now: number, options: { measured?: MeasuredRule; longWindows?: LongWindowCache } = {}): Promise<AssetMarket[]> {
  const universe = await assetUniverse(store);
  const assets = universe.assets.map((a) => a.id);
  const [latest, rows] = await Promise.all([latestIndexPrices(store, assets, now, options.measured), loadAssetMarketRows(store, assets, now, options.longWindows)]);
  const byAsset = new Map(rows.map((r) => [r.asset, r]));

  const keyed = await mapInTurns(universe.assets, assetsPerTurn, (asset) => rankKeyed(toAssetMarket(asset, byAsset.get(asset.id), latest.get(asset.id), now)));
  const ranked = keyed.sort(byRank);
  return ranked.map(({ market }, i) => {
    market.rank = i + 1;
    return market;
  });
}

/** A market with what ranks it, computed once before the sort. */
interface RankKeyed {
  market: AssetMarket;
  /** 0: priced, supply known; 1: priced, circulating supply unknown; 2: unpriced. */
  group: number;
  /** Larger first within the group: the market cap (group 0) or the 24 h volume (group 1). */
  size: number;
}

function rankKeyed(market: AssetMarket): RankKeyed {
  const group = market.price === null ? 2 : circulatingUnknown(market.asset) ? 1 : 0;
  return { market, group, size: group === 1 ? market.volume24h : (market.marketCap ?? 0) };
}

/**
 * Rank order: priced assets whose supply is known, largest cap first; then priced assets whose
 * circulating supply is unknown (discovered ones: their market cap is 0, nobody knows it), largest 24 h volume
 * first; then unpriced assets. Equal ones keep the universe's order (sort is stable).
 */
function byRank(a: RankKeyed, b: RankKeyed): number {
  return a.group - b.group || b.size - a.size;
}

function toAssetMarket(asset: CatalogAsset, row: AssetMarketRow | undefined, latest: LatestIndexPrice | undefined, now: number): AssetMarket {
  const supply = supplyAt(asset, now);
  const known = {
    asset,
    rank: 0,
    circulatingSupply: supply.circulating,
    totalSupply: supply.total,
    maxSupply: supply.max,
    supplySource: supply.source,
    // All-time figures stay known while the asset has no current price.
    ath: row ? { price: row.ath[0], at: row.ath[1] } : null,
    atl: row ? { price: row.atl[0], at: row.atl[1] } : null,
    observedSince: row?.firstTradeAtMs ?? null,
  };
  // Priced only with a trade on record in asset_price_extremes (ath, atl, observedSince come from it).
  if (!row || !latest) {
    const none = { '1h': null, '24h': null, '7d': null, '14d': null, '30d': null, '1y': null };
    return {
      ...known,
      price: null,
      updatedAt: null,
      measured: false,
      volume24h: 0,
      high24h: null,
      low24h: null,
      change: none,
      marketCap: null,
      fullyDilutedValuation: null,
      marketCapChange24h: null,
      reference: none,
      ranges: { '24h': null, '7d': null, '30d': null, '1y': null },
    };
  }
  const { price } = latest;
  const reference: Record<ChangeWindow, PricePoint | null> = {
    '1h': latest.reference['1h'],
    '24h': latest.reference['24h'],
    '7d': fromSeconds(row.ref7d),
    '14d': fromSeconds(row.ref14d),
    '30d': fromSeconds(row.ref30d),
    '1y': fromSeconds(row.ref1y),
  };
  const change: Record<ChangeWindow, number | null> = {
    '1h': percent(price, reference['1h']?.price),
    '24h': percent(price, reference['24h']?.price),
    '7d': percent(price, reference['7d']?.price),
    '14d': percent(price, reference['14d']?.price),
    '30d': percent(price, reference['30d']?.price),
    '1y': percent(price, reference['1y']?.price),
  };
  const range = (high: number | null, low: number | null) => (high === null || low === null ? null : { high, low });
  const marketCap = price * supply.circulating;
  const ref24h = reference['24h'];
  // No trade in the last 24 h (the price is from the day before): the index held that price.
  const high24h = row.high24h ?? price;
  const low24h = row.low24h ?? price;
  return {
    ...known,
    price,
    updatedAt: latest.updatedAt,
    measured: latest.measured,
    volume24h: latest.volume24hUsd,
    high24h,
    low24h,
    change,
    marketCap,
    fullyDilutedValuation: price * (supply.max ?? supply.total),
    // An unknown supply is a market cap of 0 now and at the reference: no change.
    marketCapChange24h: ref24h ? (circulatingUnknown(asset) ? 0 : percent(marketCap, ref24h.price * supplyAt(asset, ref24h.at).circulating)) : null,
    reference,
    ranges: {
      '24h': { high: high24h, low: low24h },
      '7d': range(row.high7d, row.low7d),
      '30d': range(row.high30d, row.low30d),
      '1y': range(row.high1y, row.low1y),
    },
  };
}

/**
 * The market cap at the reference of `window`, when that reference is truly at or before
 * now - window (not the stand-in for a shorter history); null otherwise. Aggregates over several
 * assets compare only assets that have one, so a new listing cannot fake a change.
 */
export function capAtReference(m: AssetMarket, window: ChangeWindow, now: number): number | null {
  const ref = m.reference[window];
  if (m.price === null || !ref || ref.at > now - changeWindowMs[window]) return null;
  return ref.price * supplyAt(m.asset, ref.at).circulating;
}

/**
 * Percent change of the summed market cap over the assets that have a cap at the reference of
 * `window` (capAtReference), both sums over that one universe; null when it is empty.
 */
export function universeCapChange(markets: readonly AssetMarket[], window: ChangeWindow, now: number): number | null {
  let capNow = 0;
  let capThen = 0;
  for (const m of markets) {
    const then = capAtReference(m, window, now);
    if (then === null || m.marketCap === null) continue;
    capNow += m.marketCap;
    capThen += then;
  }
  return capThen > 0 ? (capNow / capThen - 1) * 100 : null;
}

export interface AssetMarketSnapshot {
  /** unix ms the snapshot was computed for. */
  at: number;
  markets: AssetMarket[];
  /** The priced ones (isPriced), in rank order: what the lists serve, filtered once per snapshot. */
  priced: PricedMarket[];
}

/** How long a snapshot is the newest: past this age, its successor is built. */
const snapshotMaxAgeMs = 5_000;
/** How long past that a complete snapshot still answers while its successor is being built. */
const snapshotServedWhileRebuildingMs = 5_000;
/** How long after the last request the snapshot is still kept built ahead. */
const snapshotKeptAheadMs = 60_000;

/** The snapshots of one store under one `measured` rule. */
interface HeldSnapshots {
  /** The newest complete snapshot. */
  current?: AssetMarketSnapshot;
  /** Its successor, while it is being built. */
  building?: Promise<AssetMarketSnapshot>;
  /** When a route last asked for it (unix ms). */
  askedAt: number;
  /** The build ahead that is due, if any. */
  ahead?: NodeJS.Timeout;
  /** Set when the store's API closes: nothing is built ahead any more. */
  stopped?: boolean;
}

/** Per store, per `measured` rule (its two limits, as a key). */
const snapshots = new WeakMap<StoreCalls, Map<string, HeldSnapshots>>();
/** Per store: the long windows its snapshots share, whatever their rule (assetLongWindows.ts). */
const longWindowCaches = new WeakMap<StoreCalls, LongWindowCache>();

/**
 * One snapshot shared by every route that serves asset markets (coins, coin, chart, global,
 * categories): every distinct request (pages, id lists) reads the same one. A snapshot is the
 * newest for 5 s; while a route asked within the last minute, its successor is built ahead when it
 * turns 5 s old, and the previous one answers until then (for up to 5 s more), so that a request
 * whose answer is not cached does not wait on the store: the build queues behind the pipeline's
 * queries (infra/storeLane.ts) and took 0.4 to 1.3 s in the market bench. A request finds a snapshot
 * at most 10 s old, or waits for the one being built. A failed build is not kept, and stops the
 * builds ahead until a route asks again. Every route that reads it caches its answers 30 s or more.
 */
export function sharedAssetMarkets(store: StoreCalls, measured: MeasuredRule): Promise<AssetMarketSnapshot> {
  const now = Date.now();
  let byRule = snapshots.get(store);
  if (!byRule) snapshots.set(store, (byRule = new Map()));
  const rule = `${measured.staleAfterMs}/${measured.minFreeBytes}`;
  let held = byRule.get(rule);
  if (!held) byRule.set(rule, (held = { askedAt: now }));
  held.askedAt = now;
  const age = held.current ? now - held.current.at : Infinity;
  if (age < snapshotMaxAgeMs) return Promise.resolve(held.current!);
  const building = held.building ?? buildSnapshot(store, measured, held);
  return age < snapshotMaxAgeMs + snapshotServedWhileRebuildingMs ? Promise.resolve(held.current!) : building;
}

/** The long windows the snapshots and other readers of `store`'s asset markets share (assetLongWindows.ts). */
export function longWindowCacheOf(store: StoreCalls): LongWindowCache {
  let cache = longWindowCaches.get(store);
  if (!cache) longWindowCaches.set(store, (cache = new LongWindowCache()));
  return cache;
}

/** Builds the next snapshot of `held`; once it is complete it is the current one, and the one after it is due. */
function buildSnapshot(store: StoreCalls, measured: MeasuredRule, held: HeldSnapshots): Promise<AssetMarketSnapshot> {
  const at = Date.now();
  clearTimeout(held.ahead);
  const building = loadAssetMarkets(store, at, { measured, longWindows: longWindowCacheOf(store) }).then((markets) => ({ at, markets, priced: markets.filter(isPriced) }));
  held.building = building;
  building.then(
    (snapshot) => {
      held.building = undefined;
      held.current = snapshot;
      if (held.stopped) return;
      held.ahead = setTimeout(() => buildAhead(store, measured, held), Math.max(0, snapshot.at + snapshotMaxAgeMs - Date.now()));
      // Nothing to keep the process up for: a process that is done may exit with a build due.
      held.ahead.unref();
    },
    () => {
      held.building = undefined;
    },
  );
  return building;
}

function buildAhead(store: StoreCalls, measured: MeasuredRule, held: HeldSnapshots): void {
  held.ahead = undefined;
  if (held.stopped || held.building || Date.now() - held.askedAt > snapshotKeptAheadMs) return;
  // Its failure is the next request's to see: that request builds again (or is answered with the previous snapshot).
  buildSnapshot(store, measured, held).catch(() => {});
}

/** Stops building this store's snapshots ahead (the API closing: its store is closed next). */
export function stopSharedAssetMarkets(store: StoreCalls): void {
  for (const held of snapshots.get(store)?.values() ?? []) {
    held.stopped = true;
    clearTimeout(held.ahead);
  }
  snapshots.delete(store);
  longWindowCaches.delete(store);
}
