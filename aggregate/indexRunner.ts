import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import { fiatCurrencies, loadUsdRates, type Currency, type UsdRates } from '../api/currency.ts';
import { findVenue } from '../infra/catalog/catalog.ts';
import type { Config } from '../infra/config.ts';
import type { Logger } from '../infra/log.ts';
import type { Store } from '../infra/store.ts';
import { loadStablecoinRates, type StablecoinRate, type UsdStablecoin } from './fxMeasured.ts';
import {
  computeIndexSecond,
  indexParamsSchema,
  marketKey,
  staleLookbackMs,
  type IndexParams,
  type IndexSecond,
  type MarketInput,
  type PreviousIndex,
} from './indexPrice.ts';

/**
 * The index runner of the aggregate role: every second it computes the index price of every asset
 * for the seconds that ended at least `lagMs` ago, from per-market seconds (market_seconds), 1m
 * candles (trailing volume, trade rate, last price) and the latest books (market_quality), and
 * writes index_ticks and index_constituents_latest. It recomputes a short trailing window so late
 * trades land, goes back further when the trade sink reports older trades stored late
 * (noteInserted), catches up in bounded chunks after a pause, and resumes from its own tables.
 */

export const indexScheduleSchema = z.object({
  /** A second is computed once it ended this long ago (ms): trades still in the aggregator's batch land first. */
  lagMs: z.number().int().min(0).default(2_000),
  /** Seconds already computed that each step computes again, for trades that arrived late. */
  recomputeSeconds: z.number().int().min(0).default(10),
  /** Most seconds one step computes: catching up after a pause happens in steps of this size. */
  maxSecondsPerTick: z.number().int().positive().default(600),
  /** With no index computed yet, start at most this far back (ms). */
  backfillMs: z.number().int().positive().default(7 * 86_400_000),
});
export type IndexSchedule = z.infer<typeof indexScheduleSchema>;
export const defaultIndexSchedule: IndexSchedule = indexScheduleSchema.parse({});

/** The engine's parameters from the environment (infra/config.ts documents each one). */
export function indexSettingsFromConfig(config: Config): { params: IndexParams; schedule: IndexSchedule } {
  return {
    params: indexParamsSchema.parse({
      outlierThreshold: config.INDEX_OUTLIER_PCT / 100,
      outlierReadmitFraction: config.INDEX_OUTLIER_READMIT_PCT / 100,
      minShare: config.INDEX_MIN_SHARE_PCT / 100,
      staleMinMs: config.INDEX_STALE_MIN_MS,
      staleMaxMs: config.INDEX_STALE_MAX_MS,
      staleIntervals: config.INDEX_STALE_INTERVALS,
      minHealthyVenues: config.INDEX_MIN_VENUES,
      crossedBookMaxAgeMs: config.INDEX_CROSSED_BOOK_MAX_AGE_MS,
      includePerpetuals: config.INDEX_PERPETUALS,
      volumeWindowMinutes: config.INDEX_VOLUME_WINDOW_MIN,
      intervalWindowMinutes: config.INDEX_INTERVAL_WINDOW_MIN,
    }),
    schedule: indexScheduleSchema.parse({
      lagMs: config.INDEX_LAG_MS,
      recomputeSeconds: config.INDEX_RECOMPUTE_S,
      maxSecondsPerTick: config.INDEX_MAX_SECONDS_PER_TICK,
      backfillMs: config.INDEX_BACKFILL_HOURS * 3_600_000,
    }),
  };
}

/** USD per unit of a quote currency, as the index applies it (see quoteRate). */
export interface QuoteRates {
  stablecoins: Record<UsdStablecoin, StablecoinRate>;
  fiat: UsdRates;
}

export async function loadQuoteRates(store: Store, at: number): Promise<QuoteRates> {
  const [stablecoins, fiat] = await Promise.all([loadStablecoinRates(store, at), loadUsdRates(store, at)]);
  return { stablecoins, fiat };
}

const stablecoinOfQuote: Record<string, UsdStablecoin> = { USDT: 'tether', USDC: 'usd-coin' };
/** Crypto quotes valued through our own index of the same second (Coin Metrics lists BTC and ETH quotes for other assets). */
const cryptoQuotes: Record<string, string> = { BTC: 'bitcoin', ETH: 'ethereum' };
const fiatQuotes = new Set<string>(fiatCurrencies.filter((c) => c !== 'usd'));

/**
 * USD per unit of `quote` for a market of `asset` at a second: USD 1; USDT and USDC at their
 * measured rate (par while unmeasured); fiat through FX (per USD, inverted); BTC and ETH through
 * the index price of that second, except for bitcoin and ethereum themselves (Coin Metrics: only
 * fiat-quoted markets for those two). undefined: no rate.
 */
function quoteRate(quote: string, asset: string, rates: QuoteRates, indexNow: ReadonlyMap<string, number>): number | undefined {
  if (quote === 'USD') return 1;
  const stablecoin = stablecoinOfQuote[quote];
  if (stablecoin) return rates.stablecoins[stablecoin].usdPer;
  const indexAsset = cryptoQuotes[quote];
  if (indexAsset) return Object.values(cryptoQuotes).includes(asset) ? undefined : indexNow.get(indexAsset);
  const fiat = quote.toLowerCase();
  if (fiatQuotes.has(fiat)) {
    const perUsd = rates.fiat.perUsd(fiat as Currency);
    return perUsd === undefined || perUsd <= 0 ? undefined : 1 / perUsd;
  }
  return undefined;
}

/** Assets whose index prices value other assets' quotes come first. */
function assetOrder(a: string, b: string): number {
  const rank = (x: string) => (x === 'bitcoin' ? 0 : x === 'ethereum' ? 1 : 2);
  return rank(a) - rank(b) || (a < b ? -1 : a > b ? 1 : 0);
}

/** Per market, its windows at the start of the range's first minute, from the 1m candles. */
const windowsSql = `
SELECT
    asset, venue, market, quote,
    sumIf(quote_volume, bucket >= toDateTime({first_minute:UInt32} - {volume_window_s:UInt32}, 'UTC')) AS windowNotional,
    sumIf(trade_count, bucket >= toDateTime({first_minute:UInt32} - {volume_window_s:UInt32}, 'UTC')) AS windowTrades,
    sumIf(trade_count, bucket >= toDateTime({first_minute:UInt32} - {interval_window_s:UInt32}, 'UTC')) AS intervalTrades,
    argMaxMergeIf(close, bucket >= toDateTime({first_minute:UInt32} - {volume_window_s:UInt32}, 'UTC')) AS close
FROM candles_1m
WHERE bucket >= toDateTime({first_minute:UInt32} - greatest({volume_window_s:UInt32}, {interval_window_s:UInt32}), 'UTC')
  AND bucket < toDateTime({first_minute:UInt32}, 'UTC')
GROUP BY asset, venue, market, quote
HAVING windowTrades > 0 OR intervalTrades > 0`;

/** The 1m candles that enter or leave those windows while the range's minutes pass. */
const bucketsSql = `
SELECT asset, venue, market, quote, toUnixTimestamp(bucket) AS bucket, sum(quote_volume) AS notional, sum(trade_count) AS trades, argMaxMerge(close) AS close
FROM candles_1m
WHERE (bucket >= toDateTime({first_minute:UInt32}, 'UTC') AND bucket < toDateTime({last_minute:UInt32}, 'UTC'))
   OR (bucket >= toDateTime({first_minute:UInt32} - {volume_window_s:UInt32}, 'UTC') AND bucket < toDateTime({last_minute:UInt32} - {volume_window_s:UInt32}, 'UTC'))
   OR (bucket >= toDateTime({first_minute:UInt32} - {interval_window_s:UInt32}, 'UTC') AND bucket < toDateTime({last_minute:UInt32} - {interval_window_s:UInt32}, 'UTC'))
GROUP BY asset, venue, market, quote, bucket`;

const lastTradesSql = `
SELECT asset, venue, market, quote, argMaxMerge(last_price) AS price, toUnixTimestamp64Milli(max(last_trade_at)) AS lastTradeAt
FROM market_seconds
WHERE second >= toDateTime({from_s:UInt32}, 'UTC') AND second < toDateTime({to_s:UInt32}, 'UTC')
GROUP BY asset, venue, market, quote`;

const secondsSql = `
SELECT
    asset, venue, market, quote, toUnixTimestamp(second) AS second,
    sum(notional) AS notional, sum(volume) AS volume, sum(trade_count) AS trades,
    argMaxMerge(last_price) AS price, toUnixTimestamp64Milli(max(last_trade_at)) AS lastTradeAt
FROM market_seconds
WHERE second >= toDateTime({from_s:UInt32}, 'UTC') AND second <= toDateTime({to_s:UInt32}, 'UTC')
GROUP BY asset, venue, market, quote, second
ORDER BY second`;

const booksSql = `
SELECT asset, venue, market, toUnixTimestamp64Milli(ts) AS ts, spread_bps < 0 AS crossed
FROM market_quality FINAL
WHERE ts >= fromUnixTimestamp64Milli({from:Int64}, 'UTC')`;

/** Per market, the collector's last connection status before the range. */
const statusBeforeSql = `
SELECT asset, venue, market, argMax(connected, ts) AS connected
FROM market_connections
WHERE ts < fromUnixTimestamp64Milli({from_ms:Int64}, 'UTC')
GROUP BY asset, venue, market`;

/** The statuses published within the range, in time order. */
const statusChangesSql = `
SELECT asset, venue, market, connected, toUnixTimestamp64Milli(ts) AS at
FROM market_connections
WHERE ts >= fromUnixTimestamp64Milli({from_ms:Int64}, 'UTC') AND ts < fromUnixTimestamp64Milli({to_ms:Int64}, 'UTC')
ORDER BY at`;

/** The seconds of a range for which index_ticks holds a row, per asset: a recomputation must replace each. */
const storedSecondsSql = `
SELECT DISTINCT asset, toUnixTimestamp(second) AS second
FROM index_ticks
WHERE second >= toDateTime({from_s:UInt32}, 'UTC') AND second <= toDateTime({to_s:UInt32}, 'UTC')`;

/** The latest stored row of each asset at or before a second: the state a restart resumes from. */
const priorSql = `
SELECT
    asset,
    argMax(price, second) AS price,
    toString(argMax(status, second)) AS status,
    argMax(constituents, second) AS constituents,
    argMax(excluded, second) AS excluded,
    toUnixTimestamp64Milli(argMax(last_trade_at, second)) AS lastTradeAt
FROM index_ticks FINAL
WHERE second <= toDateTime({second:UInt32}, 'UTC') AND second > toDateTime({from_s:UInt32}, 'UTC')
GROUP BY asset`;

interface MarketKeyRow { asset: string; venue: string; market: string; quote: string }
interface WindowRow extends MarketKeyRow { windowNotional: number; windowTrades: number; intervalTrades: number; close: number }
interface BucketRow extends MarketKeyRow { bucket: number; notional: number; trades: number; close: number }
interface LastTradeRow { asset: string; venue: string; market: string; quote: string; price: number; lastTradeAt: number }
interface SecondRow extends LastTradeRow { second: number; notional: number; volume: number; trades: number }
interface BookRow { asset: string; venue: string; market: string; ts: number; crossed: number | boolean }
interface StatusRow { asset: string; venue: string; market: string; connected: number | boolean; at: number }
interface PriorRow { asset: string; price: number; status: string; constituents: string[]; excluded: Record<string, string>; lastTradeAt: number }

/** What the runner knows of one market while it walks the seconds of a range. */
interface MarketState {
  venue: string;
  market: string;
  quote: string;
  contract: 'spot' | 'perpetual';
  lastPrice: number | undefined;
  lastTradeAt: number | null;
  /** From the 1m candles, the whole minutes before the current one: value and trades in the volume window, its last price, trades in the interval window. */
  windowNotional: number;
  windowTrades: number;
  windowClose: number | undefined;
  intervalTrades: number;
  /** Traded since the current minute started. */
  minuteNotional: number;
  inSecond: { notional: number; volume: number; trades: number };
}

/** An asset's published index at the end of a second. */
export interface PublishedIndex extends PreviousIndex {
  /** What its stored row says apart from the volumes: a second equal to the one before, without constituent trades, is not stored. */
  content: string;
}
/** Every asset with a price at the end of a second; an asset missing from it had none. */
export type IndexState = ReadonlyMap<string, PublishedIndex>;

export interface TickWrites {
  /** Seconds up to this one may hold rows from an earlier computation: written again whatever their content. */
  storedThrough: number;
  /**
   * What index_ticks holds per asset and second as far as this runner knows: the content it wrote
   * (an identical recomputation is not written again), or '' for a row an earlier computation
   * stored, which a recomputation replaces whatever its content.
   */
  written: Map<string, string>;
}

export interface IndexRangeResult {
  /** Assets that had any candidate market in the range. */
  assets: number;
  /** Rows written to index_ticks. */
  rows: number;
  /** The state at the end of each second from `keepFrom` to `to`. */
  states: Map<number, IndexState>;
}

const noTrades = { notional: 0, volume: 0, trades: 0 };
let lastComputedAt = 0;

/** Index of the first element of ascending `sorted` above `t` (its length when none). */
function firstAbove(sorted: readonly number[], t: number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (sorted[mid]! <= t) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** The seconds at which a book measured at `at` starts and stops counting for crossed_book. */
function edges(at: number, maxAgeMs: number): number[] {
  const first = Math.ceil((at - maxAgeMs) / 1000) - 1;
  const past = Math.floor((at + maxAgeMs) / 1000);
  return [first - 1, first, first + 1, past - 1, past, past + 1];
}

function contentOf(r: IndexSecond): string {
  const constituents = r.status === 'fail_closed' ? [] : r.markets.filter((m) => m.reason === null).map(marketKey);
  const excluded = r.markets.filter((m) => m.reason !== null).map((m) => [marketKey(m), m.reason]);
  return JSON.stringify([r.price, r.status, constituents, excluded, r.lastTradeAt]);
}

/**
 * Computes the index of every asset for the seconds `from`..`to` (unix s, inclusive), starting from
 * `prior` (the state at the end of `from - 1`), and writes index_ticks: a row for a second in which
 * a constituent traded or anything else of the row changed (price, status, constituents,
 * exclusions, last trade), and a `none` row when an asset loses its price; readers take the latest
 * row at or before a second. Also writes the verdict on every candidate market at `to` into
 * index_constituents_latest.
 */
export async function computeIndexRange(
  store: Store,
  range: { from: number; to: number; keepFrom: number },
  params: IndexParams,
  rates: QuoteRates,
  prior: IndexState,
  writes: TickWrites,
): Promise<IndexRangeResult> {
  const { from, to } = range;
  // Strictly increasing: the newest computation of a second must win even within one millisecond.
  const computedAt = (lastComputedAt = Math.max(Date.now(), lastComputedAt + 1));
  const firstMinute = Math.floor(from / 60) * 60;
  const lastMinute = Math.floor(to / 60) * 60;
  const lookbackS = Math.ceil(staleLookbackMs(params) / 1000);
  const volumeWindowS = params.volumeWindowMinutes * 60;
  const intervalWindowS = params.intervalWindowMinutes * 60;
  const windowParams = { first_minute: firstMinute, last_minute: lastMinute, volume_window_s: volumeWindowS, interval_window_s: intervalWindowS };

  const [windowRows, bucketRows, lastTrades, secondRows, books, statusBefore, statusChanges] = await Promise.all([
    store.rows<WindowRow>(windowsSql, windowParams),
    store.rows<BucketRow>(bucketsSql, windowParams),
    store.rows<LastTradeRow>(lastTradesSql, { from_s: from - lookbackS, to_s: from }),
    store.rows<SecondRow>(secondsSql, { from_s: firstMinute, to_s: to }),
    store.rows<BookRow>(booksSql, { from: from * 1000 - params.crossedBookMaxAgeMs }),
    store.rows<Omit<StatusRow, 'at'>>(statusBeforeSql, { from_ms: from * 1000 }),
    store.rows<StatusRow>(statusChangesSql, { from_ms: from * 1000, to_ms: (to + 1) * 1000 }),
  ]);

  const states = new Map<string, Map<string, MarketState>>();
  const stateOf = (r: { asset: string; venue: string; market: string; quote: string }): MarketState => {
    let markets = states.get(r.asset);
    if (!markets) states.set(r.asset, (markets = new Map()));
    const key = marketKey(r);
    let s = markets.get(key);
    if (!s) {
      s = {
        venue: r.venue, market: r.market, quote: r.quote, contract: findVenue(r.venue)?.contract ?? 'spot',
        lastPrice: undefined, lastTradeAt: null,
        windowNotional: 0, windowTrades: 0, windowClose: undefined, intervalTrades: 0, minuteNotional: 0, inSecond: noTrades,
      };
      markets.set(key, s);
    }
    return s;
  };
  for (const r of lastTrades) Object.assign(stateOf(r), { lastPrice: r.price, lastTradeAt: r.lastTradeAt });
  for (const r of windowRows) {
    Object.assign(stateOf(r), { windowNotional: r.windowNotional, windowTrades: r.windowTrades, intervalTrades: r.intervalTrades });
    if (r.windowTrades > 0) stateOf(r).windowClose = r.close;
  }
  const bucketsByStart = Map.groupBy(bucketRows, (r) => r.bucket);
  const secondsByStart = Map.groupBy(secondRows, (r) => r.second);
  const crossedAt = new Map(books.filter((b) => Boolean(b.crossed)).map((b) => [`${b.asset}\u0000${marketKey(b)}`, b.ts]));
  /** asset + venue:market of the markets whose collector last said their socket is down, at the second being evaluated. */
  const disconnected = new Set(statusBefore.filter((r) => !r.connected).map((r) => `${r.asset}\u0000${marketKey(r)}`));
  let statusesApplied = 0;
  for (const r of [...bucketRows, ...secondRows]) stateOf(r);
  for (const asset of prior.keys()) if (!states.has(asset)) states.set(asset, new Map());
  const assets = [...states.keys()].sort(assetOrder);
  // In key order, so the stored constituents and verdicts do not depend on the order rows arrived in.
  const marketsOf = new Map(assets.map((a) => [a, [...states.get(a)!.entries()].sort(([x], [y]) => (x < y ? -1 : 1)).map(([, st]) => st)]));

  const rows: TickRow[] = [];
  const constituents: object[] = [];
  const kept = new Map<number, IndexState>();
  let published = new Map(prior);
  /** Content of the rows to insert, recorded in `writes.written` only once the insert succeeded. */
  const pending = new Map<string, string>();
  const write = (row: TickRow) => {
    const key = `${row.asset}\u0000${row.second}`;
    const content = tickContent(row);
    if (writes.written.get(key) === content) return;
    pending.set(key, content);
    rows.push(row);
  };
  // Only the seconds at which something can change are evaluated (see nextEvent); every other
  // second equals the one before it and has no trade, so it would store nothing.
  const tradeSeconds = [...secondsByStart.keys()].sort((x, y) => x - y);
  const crossedEdges = [...crossedAt.values()].flatMap((at) => edges(at, params.crossedBookMaxAgeMs)).sort((x, y) => x - y);
  const forced = new Set<number>();
  for (let t = from; t <= Math.min(to, writes.storedThrough); t++) forced.add(t);
  for (const key of writes.written.keys()) forced.add(Number(key.split('\u0000')[1]));
  const forcedSeconds = [...forced].filter((t) => t >= from && t <= to).sort((x, y) => x - y);
  /** A row is written for an asset in a second that may hold one already: the recomputation replaces it. */
  const mustWrite = (asset: string, t: number) => t <= writes.storedThrough || writes.written.has(`${asset}\u0000${t}`);
  // A status takes effect in the second it was published in (the state at the end of that second).
  const statusSeconds = [...new Set(statusChanges.map((r) => Math.floor(r.at / 1000)))].sort((x, y) => x - y);
  // A minute matters when a candle joins the windows (the minute before traded) or leaves one of them.
  const changedMinutes = [...new Set(bucketRows.flatMap((r) => [r.bucket + 60, r.bucket + 60 + volumeWindowS, r.bucket + 60 + intervalWindowS]))]
    .filter((m) => m > firstMinute && m <= lastMinute)
    .sort((x, y) => x - y);
  /** Rolls every market's windows forward from the start of minute `m - 60` to the start of `m`. */
  const advanceWindows = (m: number) => {
    for (const r of bucketsByStart.get(m - 60) ?? []) {
      const st = stateOf(r);
      st.windowNotional += r.notional;
      st.windowTrades += r.trades;
      st.windowClose = r.close;
      st.intervalTrades += r.trades;
    }
    for (const r of bucketsByStart.get(m - 60 - volumeWindowS) ?? []) {
      const st = stateOf(r);
      st.windowTrades -= r.trades;
      // Exactly 0 once the last candle left: sums of floats would leave a residue.
      st.windowNotional = st.windowTrades > 0 ? st.windowNotional - r.notional : 0;
    }
    for (const r of bucketsByStart.get(m - 60 - intervalWindowS) ?? []) stateOf(r).intervalTrades -= r.trades;
  };
  /** The next second whose index may differ from `t`'s: a trade, a minute, a market turning stale, a crossed book's window, a connection status. */
  const nextEvent = (t: number): number => {
    const ahead = (sorted: number[]) => sorted[firstAbove(sorted, t)] ?? Infinity;
    let next = Math.min(ahead(tradeSeconds), ahead(changedMinutes), ahead(crossedEdges), ahead(forcedSeconds), ahead(statusSeconds), t < from ? from : t < to ? to : Infinity);
    for (const markets of states.values()) {
      for (const st of markets.values()) {
        if (st.lastTradeAt === null || !(st.windowNotional + st.minuteNotional > 0)) continue;
        const meanIntervalMs = st.intervalTrades > 0 ? (params.intervalWindowMinutes * 60_000) / st.intervalTrades : Infinity;
        const threshold = Math.max(params.staleMinMs, Math.min(params.staleMaxMs, params.staleIntervals * meanIntervalMs));
        // The first second whose end is more than `threshold` after the last trade; its neighbours too, against rounding.
        const flip = Math.floor((st.lastTradeAt + threshold) / 1000);
        for (const c of [flip - 1, flip, flip + 1]) if (c > t && c < next) next = c;
      }
    }
    return next;
  };

  let minute = firstMinute;
  let evaluated = from - 1;
  for (let s = firstMinute; s <= to; s = nextEvent(s)) {
    if (Math.floor(s / 60) * 60 !== minute) {
      for (let m = minute + 60; m <= Math.floor(s / 60) * 60; m += 60) advanceWindows(m);
      minute = Math.floor(s / 60) * 60;
      for (const markets of states.values()) for (const st of markets.values()) st.minuteNotional = 0;
    }
    // The last trade before this minute, for a market whose last trade is older than the stale look-back.
    for (const markets of states.values()) for (const st of markets.values()) if (st.lastPrice === undefined && st.windowTrades > 0) st.lastPrice = st.windowClose;
    for (const markets of states.values()) for (const st of markets.values()) st.inSecond = noTrades;
    for (const r of secondsByStart.get(s) ?? []) {
      const st = stateOf(r);
      st.lastPrice = r.price;
      st.lastTradeAt = r.lastTradeAt;
      st.minuteNotional += r.notional;
      st.inSecond = { notional: r.notional, volume: r.volume, trades: r.trades };
    }
    if (s < from) continue;
    for (; statusesApplied < statusChanges.length && statusChanges[statusesApplied]!.at < (s + 1) * 1000; statusesApplied++) {
      const r = statusChanges[statusesApplied]!;
      const key = `${r.asset}\u0000${marketKey(r)}`;
      if (r.connected) disconnected.delete(key);
      else disconnected.add(key);
    }

    // The skipped seconds had the state of the last one evaluated.
    for (let t = Math.max(evaluated + 1, range.keepFrom); t < s; t++) kept.set(t, published);
    evaluated = s;
    const before = published;
    published = new Map();
    const indexNow = new Map<string, number>();
    for (const asset of assets) {
      const inputs: MarketInput[] = [];
      for (const st of marketsOf.get(asset)!) {
        const windowNotional = st.windowNotional + st.minuteNotional;
        if (!(windowNotional > 0) || st.lastPrice === undefined) continue;
        const bookAt = crossedAt.get(`${asset}\u0000${marketKey(st)}`);
        inputs.push({
          venue: st.venue,
          market: st.market,
          quote: st.quote,
          contract: st.contract,
          usdPerQuote: quoteRate(st.quote, asset, rates, indexNow),
          lastPrice: st.lastPrice,
          lastTradeAt: st.lastTradeAt,
          windowNotional,
          meanIntervalMs: st.intervalTrades > 0 ? (params.intervalWindowMinutes * 60_000) / st.intervalTrades : Infinity,
          crossed: bookAt !== undefined && Math.abs(bookAt - (s + 1) * 1000) <= params.crossedBookMaxAgeMs,
          disconnected: disconnected.has(`${asset}\u0000${marketKey(st)}`),
          inSecond: st.inSecond,
        });
      }
      const previous = before.get(asset);
      const result = inputs.length > 0 ? computeIndexSecond(s, inputs, previous, params) : undefined;
      if (result?.price === undefined) {
        if (previous || mustWrite(asset, s)) write(noPriceRow(asset, s, computedAt));
      } else {
        const content = contentOf(result);
        indexNow.set(asset, result.price);
        published.set(asset, {
          price: result.price,
          lastTradeAt: result.lastTradeAt!,
          outliers: new Set(result.markets.filter((m) => m.reason === 'outlier').map(marketKey)),
          content,
        });
        if (mustWrite(asset, s) || result.tradeCount > 0 || previous?.content !== content) write(tickRow(asset, s, result, computedAt));
      }
      if (s === to && result) for (const m of result.markets) constituents.push({ asset, ...constituentRow(m), ts: (s + 1) * 1000 });
    }
    if (s >= range.keepFrom) kept.set(s, published);
  }

  await store.insert('index_ticks', rows);
  for (const [key, content] of pending) writes.written.set(key, content);
  await store.insert('index_constituents_latest', constituents);
  for (const key of writes.written.keys()) if (Number(key.split('\u0000')[1]) < from) writes.written.delete(key);
  return { assets: [...states.values()].filter((m) => m.size > 0).length, rows: rows.length, states: kept };
}

/** The state at the end of `second` from the stored rows (after a restart). */
export async function loadIndexState(store: Store, second: number, params: IndexParams): Promise<IndexState> {
  // Every asset with a price writes a row at least once per volume window (its markets leave the
  // window, or go stale, or trade), so an older row cannot describe the asset at `second`.
  const lookbackS = params.volumeWindowMinutes * 60 + Math.ceil(staleLookbackMs(params) / 1000) + 60;
  const rows = await store.rows<PriorRow>(priorSql, { second, from_s: second - lookbackS });
  const state = new Map<string, PublishedIndex>();
  for (const r of rows) {
    if (r.status === 'none') continue;
    const excluded = Object.entries(r.excluded).sort(([a], [b]) => (a < b ? -1 : 1));
    state.set(r.asset, {
      price: r.price,
      lastTradeAt: r.lastTradeAt,
      outliers: new Set(excluded.filter(([, reason]) => reason === 'outlier').map(([key]) => key)),
      content: JSON.stringify([r.price, r.status, r.constituents, excluded, r.lastTradeAt]),
    });
  }
  return state;
}

type TickRow = ReturnType<typeof tickRow>;
const tickContent = ({ computed_at: _, ...content }: TickRow) => JSON.stringify(content);

function tickRow(asset: string, second: number, r: IndexSecond, computedAt: number) {
  const included = r.status === 'fail_closed' ? [] : r.markets.filter((m) => m.reason === null).map(marketKey);
  const excluded = Object.fromEntries(r.markets.filter((m) => m.reason !== null).map((m) => [marketKey(m), m.reason]));
  return {
    asset,
    second,
    price: r.price!,
    status: r.status as IndexSecond['status'] | 'none',
    constituents: included,
    excluded: excluded as Record<string, string | null>,
    volume: r.volume,
    volume_usd: r.volumeUsd,
    trade_count: r.tradeCount,
    last_trade_at: r.lastTradeAt ?? 0,
    computed_at: computedAt,
  };
}

/** The row that says an asset has no index price from this second on. */
function noPriceRow(asset: string, second: number, computedAt: number): TickRow {
  return { asset, second, price: 0, status: 'none', constituents: [], excluded: {}, volume: 0, volume_usd: 0, trade_count: 0, last_trade_at: 0, computed_at: computedAt };
}

function constituentRow(m: IndexSecond['markets'][number]) {
  return {
    venue: m.venue,
    market: m.market,
    quote: m.quote,
    price_usd: m.priceUsd,
    volume_24h_usd: m.volume24hUsd,
    weight: m.weight,
    excluded: m.reason !== null,
    reason: m.reason ?? '',
  };
}

export interface IndexRunnerStats {
  /** The last second computed (unix s); undefined before the first step. */
  lastComputed: number | undefined;
  ranges: number;
  /** Rows written to index_ticks. */
  rows: number;
  failures: number;
}

export interface IndexRunnerOptions {
  store: Store;
  log: Logger;
  params: IndexParams;
  schedule: IndexSchedule;
  /** Clock, for tests and benchmarks that run simulated time. */
  now?: () => number;
}

/**
 * Computes the index second by second (see the module comment). `step` does one bounded unit of
 * work; `catchUp` steps until the index reaches now - lag; `start` runs it every second until stopped.
 */
export class IndexRunner {
  readonly #options: IndexRunnerOptions;
  readonly #stats: IndexRunnerStats = { lastComputed: undefined, ranges: 0, rows: 0, failures: 0 };
  #writes: TickWrites | undefined;
  /** The state at the end of the recent seconds a step may start again from. */
  #states = new Map<number, IndexState>();
  /** Set by catchUp({ from }) and by late trades: where the next step starts instead of the trailing window. */
  #nextFrom: number | undefined;
  /** While computing seconds again after going back: up to this second, index_ticks may hold rows this runner no longer knows. */
  #revisitThrough: number | undefined;
  /** The first second of trades stored since the last step (noteInserted). */
  #insertedFrom: number | undefined;
  #rates: { minute: number; rates: QuoteRates } | undefined;
  #loop: Promise<void> | undefined;
  #stopped = false;
  #wake: AbortController | undefined;

  constructor(options: IndexRunnerOptions) {
    this.#options = options;
  }

  stats(): IndexRunnerStats {
    return { ...this.#stats };
  }

  #now(): number {
    return this.#options.now?.() ?? Date.now();
  }

  /**
   * The last second computed before this runner started: the newest second of index_ticks or of
   * index_constituents_latest (written at the end of every step); undefined on an empty store.
   */
  async #storedThrough(): Promise<number | undefined> {
    const [row] = await this.#options.store.rows<{ latest: number }>(
      `SELECT greatest(
           (SELECT toUnixTimestamp(max(second)) FROM index_ticks),
           (SELECT intDiv(toUnixTimestamp64Milli(max(ts)), 1000) - 1 FROM index_constituents_latest)) AS latest,
         (SELECT count() FROM index_ticks) + (SELECT count() FROM index_constituents_latest) AS n
       HAVING n > 0`,
    );
    return row?.latest;
  }

  /** The first second at or after `from` with a trade; a far-future sentinel when none. */
  async #nextTradeSecond(from: number): Promise<number> {
    const [row] = await this.#options.store.rows<{ first: number }>(
      `SELECT toUnixTimestamp(min(second)) AS first, count() AS n FROM market_seconds WHERE second >= toDateTime({from_s:UInt32}, 'UTC') HAVING n > 0`,
      { from_s: Math.max(0, from) },
    );
    return row?.first ?? Number.MAX_SAFE_INTEGER;
  }

  /** FX and stablecoin rates at `at`, loaded once per minute: their own windows are an hour long. */
  async #quoteRates(at: number): Promise<QuoteRates> {
    const minute = Math.floor(at / 60_000);
    if (this.#rates?.minute !== minute) this.#rates = { minute, rates: await loadQuoteRates(this.#options.store, at) };
    return this.#rates.rates;
  }

  /** Resumes after the last second stored, or, on an empty store, at the first trade of the backfill window. */
  async #resume(now: number, target: number): Promise<void> {
    const stored = await this.#storedThrough();
    this.#writes ??= { storedThrough: stored ?? -1, written: new Map() };
    this.#stats.lastComputed ??=
      stored ?? Math.min(target, (await this.#nextTradeSecond(Math.floor((now - this.#options.schedule.backfillMs) / 1000))) - 1);
  }

  /**
   * Trades were stored with event times from `minTsMs` on (the trade sink's `onInserted`). When
   * they reach back before the seconds the next step computes anyway (a backlog inserted after a
   * store outage, a lagging bus), the next step computes again from their first second, at most
   * the backfill window back.
   */
  noteInserted(minTsMs: number): void {
    const second = Math.floor(minTsMs / 1000);
    this.#insertedFrom = Math.min(this.#insertedFrom ?? second, second);
  }

  /** The next steps compute again from `from`, replacing what index_ticks holds from there on. */
  #goBack(from: number): void {
    const last = this.#stats.lastComputed!;
    if (from > last) return;
    this.#revisitThrough = Math.max(this.#revisitThrough ?? last, last);
    this.#stats.lastComputed = from - 1;
    this.#nextFrom = from;
    this.#states = new Map();
  }

  /** Rows of index_ticks in these seconds that this runner did not write: a recomputation replaces each one. */
  async #noteStoredRows(from: number, to: number): Promise<void> {
    const rows = await this.#options.store.rows<{ asset: string; second: number }>(storedSecondsSql, { from_s: from, to_s: to });
    for (const r of rows) {
      const key = `${r.asset}\u0000${r.second}`;
      if (!this.#writes!.written.has(key)) this.#writes!.written.set(key, '');
    }
  }

  /** One bounded unit of work. Returns true while the index is behind now - lag. */
  async step(now = this.#now()): Promise<boolean> {
    const { store, params, schedule, log } = this.#options;
    const target = Math.floor((now - schedule.lagMs) / 1000) - 1;
    if (this.#stats.lastComputed === undefined || !this.#writes) await this.#resume(now, target);
    if (this.#insertedFrom !== undefined) {
      const late = Math.max(this.#insertedFrom, Math.floor((now - schedule.backfillMs) / 1000));
      this.#insertedFrom = undefined;
      const last = this.#stats.lastComputed!;
      if (late < (this.#nextFrom ?? last + 1 - schedule.recomputeSeconds)) {
        log.warn({ from: late, seconds: last - late + 1 }, 'trades stored after the index passed their seconds: computing those seconds again');
        this.#goBack(late);
      }
    }
    const last = this.#stats.lastComputed!;
    if (target <= last) return false;
    const from = this.#nextFrom ?? last + 1 - schedule.recomputeSeconds;
    const to = Math.min(target, last + schedule.maxSecondsPerTick);
    if (this.#revisitThrough !== undefined && from <= this.#revisitThrough) await this.#noteStoredRows(from, Math.min(to, this.#revisitThrough));
    const prior = this.#states.get(from - 1) ?? (await loadIndexState(store, from - 1, params));
    const range = { from, to, keepFrom: to - schedule.recomputeSeconds };
    const result = await computeIndexRange(store, range, params, await this.#quoteRates((to + 1) * 1000), prior, this.#writes!);
    this.#nextFrom = undefined;
    if (this.#revisitThrough !== undefined && to >= this.#revisitThrough) this.#revisitThrough = undefined;
    this.#states = result.states;
    this.#stats.ranges += 1;
    this.#stats.rows += result.rows;
    this.#stats.lastComputed = to;
    if (result.assets === 0 && to < target) {
      // No market traded within the volume window of this range: jump to the next trade instead of walking empty seconds.
      const next = await this.#nextTradeSecond(to + 1);
      this.#stats.lastComputed = Math.max(to, Math.min(target, next - 1));
    }
    log.debug({ from, to, rows: result.rows, assets: result.assets }, 'index computed');
    return this.#stats.lastComputed < target;
  }

  /**
   * Steps until the index has reached `now` - lag. With `from` (unix s), computes again from that
   * second instead of resuming: after a change of parameters, or in tests that store trades first.
   */
  async catchUp(now = this.#now(), options: { from?: number } = {}): Promise<void> {
    if (options.from !== undefined) {
      await this.#resume(now, Math.floor((now - this.#options.schedule.lagMs) / 1000) - 1);
      this.#goBack(options.from);
      // Also when `from` is ahead of what is computed: start there.
      this.#stats.lastComputed = options.from - 1;
      this.#nextFrom = options.from;
    }
    while (await this.step(now));
  }

  /** Runs every second (back to back while catching up) until `stop`. */
  start(): void {
    this.#loop ??= (async () => {
      const { log } = this.#options;
      log.info('index runner started');
      while (!this.#stopped) {
        let behind = false;
        try {
          behind = await this.step();
        } catch (err) {
          this.#stats.failures += 1;
          log.error({ err }, 'index computation failed; retrying');
        }
        if (behind || this.#stopped) continue;
        this.#wake = new AbortController();
        await sleep(1_000 - (this.#now() % 1_000), undefined, { signal: this.#wake.signal }).catch(() => undefined);
      }
    })();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    this.#wake?.abort();
    await this.#loop;
  }
}

export function startIndexRunner(options: IndexRunnerOptions): IndexRunner {
  const runner = new IndexRunner(options);
  runner.start();
  return runner;
}
