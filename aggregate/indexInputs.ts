import { catalogVenues } from '../infra/catalog/catalog.ts';
import { loadStablecoinRates } from './currency/fxMeasured.ts';
import { loadUsdRates } from './currency/usdRates.ts';
import type { Store } from '../infra/store.ts';
import { staleLookbackMs, type IndexParams } from './indexPrice.ts';
import type { QuoteRates } from './indexQuoteRate.ts';
import { rowRefreshSeconds, tickContent, type BookRow, type BucketRow, type IndexInputs, type IndexState, type LastTradeRow, type PublishedIndex, type SecondRow, type StatusBeforeRow, type StatusRow, type SweepRange, type WindowRow } from './indexSweep.ts';

/**
 * What the index engine reads from ClickHouse: per-market seconds (market_seconds), 1m candles
 * (trailing volume, trade rate, last price), the latest books (market_quality), the collectors'
 * connection statuses (market_connections), and its own tables to resume from. Everything is
 * returned as plain rows for the sweep (indexSweep.ts).
 */

/**
 * Restricts a query to the assets of `{assets:Array(String)}`, or to none when that list is empty
 * (every asset): a revisit for late trades computes only the assets they belong to.
 */
const ofAssets = '(empty({assets:Array(String)}) OR asset IN {assets:Array(String)})';

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
  AND ${ofAssets}
GROUP BY asset, venue, market, quote
HAVING windowTrades > 0 OR intervalTrades > 0`;

/** The 1m candles that enter or leave those windows while the range's minutes pass. */
const bucketsSql = `
SELECT asset, venue, market, quote, toUnixTimestamp(bucket) AS bucket, sum(quote_volume) AS notional, sum(trade_count) AS trades, argMaxMerge(close) AS close
FROM candles_1m
WHERE ((bucket >= toDateTime({first_minute:UInt32}, 'UTC') AND bucket < toDateTime({last_minute:UInt32}, 'UTC'))
   OR (bucket >= toDateTime({first_minute:UInt32} - {volume_window_s:UInt32}, 'UTC') AND bucket < toDateTime({last_minute:UInt32} - {volume_window_s:UInt32}, 'UTC'))
   OR (bucket >= toDateTime({first_minute:UInt32} - {interval_window_s:UInt32}, 'UTC') AND bucket < toDateTime({last_minute:UInt32} - {interval_window_s:UInt32}, 'UTC')))
  AND ${ofAssets}
GROUP BY asset, venue, market, quote, bucket`;

/** Per market, its last trade in the stale look-back before the range. */
const lastTradesSql = `
SELECT asset, venue, market, quote, argMaxMerge(last_price) AS price, toUnixTimestamp64Milli(max(last_trade_at)) AS lastTradeAt
FROM market_seconds
WHERE second >= toDateTime({from_s:UInt32}, 'UTC') AND second < toDateTime({to_s:UInt32}, 'UTC') AND ${ofAssets}
GROUP BY asset, venue, market, quote`;

/** Per market and second, what traded, from the start of the range's first minute to its end. */
const secondsSql = `
SELECT
    asset, venue, market, quote, toUnixTimestamp(second) AS second,
    sum(notional) AS notional, sum(volume) AS volume, sum(trade_count) AS trades,
    argMaxMerge(last_price) AS price, toUnixTimestamp64Milli(max(last_trade_at)) AS lastTradeAt
FROM market_seconds
WHERE second >= toDateTime({from_s:UInt32}, 'UTC') AND second <= toDateTime({to_s:UInt32}, 'UTC') AND ${ofAssets}
GROUP BY asset, venue, market, quote, second
ORDER BY second`;

/** Per second, the trades stored and the markets that traded: what tells a second read before from one that changed since. */
const secondCountsSql = `
SELECT toUnixTimestamp(second) AS second, sum(trade_count) AS trades, uniqExact(asset, venue, market, quote) AS markets
FROM market_seconds
WHERE second >= toDateTime({from_s:UInt32}, 'UTC') AND second <= toDateTime({to_s:UInt32}, 'UTC')
GROUP BY second`;

/**
 * The latest book of each market, measured at or after `from` (unix ms). The column is qualified:
 * a bare `ts` in WHERE is the select's alias (ms as Int64, compared as seconds: every book passed).
 */
const booksSql = `
SELECT asset, venue, market, toUnixTimestamp64Milli(ts) AS ts, spread_bps < 0 AS crossed
FROM market_quality FINAL
WHERE market_quality.ts >= fromUnixTimestamp64Milli({from:Int64}, 'UTC') AND ${ofAssets}`;

/** Per market, the collector's last connection status before the range. */
const statusBeforeSql = `
SELECT asset, venue, market, argMax(connected, ts) AS connected
FROM market_connections
WHERE ts < fromUnixTimestamp64Milli({from_ms:Int64}, 'UTC') AND ${ofAssets}
GROUP BY asset, venue, market`;

/** The statuses published within the range, in time order. */
const statusChangesSql = `
SELECT asset, venue, market, connected, toUnixTimestamp64Milli(ts) AS at
FROM market_connections
WHERE ts >= fromUnixTimestamp64Milli({from_ms:Int64}, 'UTC') AND ts < fromUnixTimestamp64Milli({to_ms:Int64}, 'UTC') AND ${ofAssets}
ORDER BY at`;

/** The latest stored row of each asset at or before a second: the state a restart resumes from (columns named as in TickRow). */
const priorSql = `
SELECT
    asset,
    argMax(price, second) AS price,
    toString(argMax(status, second)) AS status,
    argMax(constituents, second) AS constituents,
    argMax(excluded, second) AS excluded,
    toUnixTimestamp64Milli(argMax(last_trade_at, second)) AS last_trade_at,
    toUnixTimestamp(max(second)) AS written_s
FROM index_ticks FINAL
WHERE second <= toDateTime({second:UInt32}, 'UTC') AND second > toDateTime({from_s:UInt32}, 'UTC') AND ${ofAssets}
GROUP BY asset`;

/** The seconds of a range for which index_ticks holds a row, per asset: a recomputation must replace each. */
const storedSecondsSql = `
SELECT DISTINCT asset, toUnixTimestamp(second) AS second
FROM index_ticks
WHERE second >= toDateTime({from_s:UInt32}, 'UTC') AND second <= toDateTime({to_s:UInt32}, 'UTC') AND ${ofAssets}`;

/** The newest second of index_ticks or of index_constituents_latest (written at the end of every step), and the newest computed_at. */
const storedThroughSql = `
SELECT
    greatest(
        (SELECT toUnixTimestamp(max(second)) FROM index_ticks),
        (SELECT intDiv(toUnixTimestamp64Milli(max(ts)), 1000) - 1 FROM index_constituents_latest)) AS latest,
    (SELECT toUnixTimestamp64Milli(max(computed_at)) FROM index_ticks) AS computedAt,
    (SELECT count() FROM index_ticks) + (SELECT count() FROM index_constituents_latest) AS n
HAVING n > 0`;

/** The assets with a market in one of these quotes that traded within the volume window before `from_s` or since. */
const quotedInSql = `
SELECT DISTINCT asset
FROM candles_1m
WHERE quote IN {quotes:Array(String)} AND bucket >= toDateTime({from_s:UInt32} - {volume_window_s:UInt32}, 'UTC')`;

const nextTradeSql = `
SELECT toUnixTimestamp(min(second)) AS first, count() AS n
FROM market_seconds
WHERE second >= toDateTime({from_s:UInt32}, 'UTC')
HAVING n > 0`;

const perpetualVenues: ReadonlySet<string> = new Set(catalogVenues.filter((v) => v.contract === 'perpetual').map((v) => v.id));

/** What a second holds in market_seconds: its trades and the markets that traded in it. */
type SecondCount = { second: number; trades: number; markets: number };

function countsOf(rows: readonly SecondRow[]): Map<number, SecondCount> {
  const counts = new Map<number, SecondCount>();
  for (const r of rows) {
    const count = counts.get(r.second) ?? { second: r.second, trades: 0, markets: 0 };
    count.trades += r.trades;
    count.markets += 1;
    counts.set(r.second, count);
  }
  return counts;
}

function sameCounts(kept: Map<number, SecondCount>, stored: readonly SecondCount[]): boolean {
  return stored.length === kept.size && stored.every((c) => kept.get(c.second)?.trades === c.trades && kept.get(c.second)?.markets === c.markets);
}

/**
 * The per-market seconds of the live steps' minute, kept from one step to the next. A live step
 * computes the seconds of its range again from the start of their minute, so it would read up to 70
 * seconds of every market to compute 11: with this, it reads its own range and takes the minute's
 * earlier seconds from what the steps before read, once the trades and markets stored per second
 * show that none of them changed since (a late trade, a join moving trades, another aggregator's
 * sink). `forget` drops them: the runner calls it when it goes back for late trades.
 */
export class LiveSeconds {
  #minute: number | undefined;
  #through = -Infinity;
  #rows: SecondRow[] = [];
  /** Steps that took the minute's earlier seconds from here, and those that read them all. */
  readonly taken = { kept: 0, read: 0 };

  async load(store: Store, range: SweepRange): Promise<SecondRow[]> {
    const firstMinute = Math.floor(range.from / 60) * 60;
    let rows: SecondRow[] | undefined;
    if (this.#minute === firstMinute && range.from > firstMinute && range.from - 1 <= this.#through) {
      const kept = this.#rows.filter((r) => r.second < range.from);
      const [fresh, counts] = await Promise.all([
        store.rows<SecondRow>(secondsSql, { assets: [], from_s: range.from, to_s: range.to }),
        store.rows<SecondCount>(secondCountsSql, { from_s: firstMinute, to_s: range.from - 1 }),
      ]);
      if (sameCounts(countsOf(kept), counts)) rows = [...kept, ...fresh];
    }
    if (rows) this.taken.kept += 1;
    else this.taken.read += 1;
    rows ??= await store.rows<SecondRow>(secondsSql, { assets: [], from_s: firstMinute, to_s: range.to });
    this.#minute = firstMinute;
    this.#through = range.to;
    this.#rows = rows;
    return rows;
  }

  forget(): void {
    this.#minute = undefined;
    this.#rows = [];
  }
}

/** The inputs of `range`, of every asset, or of `assets` alone; a live step of every asset takes its seconds through `live`. */
export async function loadIndexInputs(store: Store, range: SweepRange, params: IndexParams, assets: readonly string[] = [], live?: LiveSeconds): Promise<IndexInputs> {
  const { from, to } = range;
  const firstMinute = Math.floor(from / 60) * 60;
  const windowParams = {
    assets,
    first_minute: firstMinute,
    last_minute: Math.floor(to / 60) * 60,
    volume_window_s: params.volumeWindowMinutes * 60,
    interval_window_s: params.intervalWindowMinutes * 60,
  };
  const [windows, buckets, lastTrades, seconds, books, statusBefore, statusChanges] = await Promise.all([
    store.rows<WindowRow>(windowsSql, windowParams),
    store.rows<BucketRow>(bucketsSql, windowParams),
    store.rows<LastTradeRow>(lastTradesSql, { assets, from_s: from - Math.ceil(staleLookbackMs(params) / 1000), to_s: from }),
    live && assets.length === 0 ? live.load(store, range) : store.rows<SecondRow>(secondsSql, { assets, from_s: firstMinute, to_s: to }),
    store.rows<BookRow>(booksSql, { assets, from: from * 1000 - params.crossedBookMaxAgeMs }),
    store.rows<StatusBeforeRow>(statusBeforeSql, { assets, from_ms: from * 1000 }),
    store.rows<StatusRow>(statusChangesSql, { assets, from_ms: from * 1000, to_ms: (to + 1) * 1000 }),
  ]);
  return { windows, buckets, lastTrades, seconds, books, statusBefore, statusChanges, perpetualVenues };
}

export async function loadQuoteRates(store: Store, at: number): Promise<QuoteRates> {
  const [stablecoins, fiat] = await Promise.all([loadStablecoinRates(store, at), loadUsdRates(store, at)]);
  return { stablecoins, fiat };
}

/** The state at the end of `second` from the stored rows (after a restart), of every asset or of `assets` alone. */
export async function loadIndexState(store: Store, second: number, params: IndexParams, assets: readonly string[] = []): Promise<IndexState> {
  // Every asset with a price has a row at least once per rowRefreshSeconds, so an older row cannot
  // describe the asset at `second`.
  const lookbackS = rowRefreshSeconds(params) + 60;
  const rows = await store.rows<PriorRow>(priorSql, { assets, second, from_s: second - lookbackS });
  const state = new Map<string, PublishedIndex>();
  for (const r of rows) {
    if (r.status === 'none') continue;
    state.set(r.asset, {
      price: r.price,
      lastTradeAt: r.last_trade_at,
      outliers: new Set(Object.entries(r.excluded).filter(([, reason]) => reason === 'outlier').map(([key]) => key)),
      content: tickContent(r),
      writtenAt: r.written_s,
    });
  }
  return state;
}
interface PriorRow {
  asset: string;
  price: number;
  status: string;
  constituents: string[];
  excluded: Record<string, string>;
  last_trade_at: number;
  written_s: number;
}

/** The last second computed before the runner started, and the newest computed_at stored; undefined on an empty store. */
export async function loadStoredThrough(store: Store): Promise<{ latest: number; computedAt: number } | undefined> {
  const [row] = await store.rows<{ latest: number; computedAt: number }>(storedThroughSql);
  return row;
}

/** The first second at or after `from` with a trade; a far-future sentinel when none. */
export async function loadNextTradeSecond(store: Store, from: number): Promise<number> {
  const [row] = await store.rows<{ first: number }>(nextTradeSql, { from_s: Math.max(0, from) });
  return row?.first ?? Number.MAX_SAFE_INTEGER;
}

/** Per asset (every one, or those of `assets`), the seconds from..to for which index_ticks holds a row. */
export function loadStoredSeconds(store: Store, from: number, to: number, assets: readonly string[] = []): Promise<{ asset: string; second: number }[]> {
  return store.rows<{ asset: string; second: number }>(storedSecondsSql, { assets, from_s: from, to_s: to });
}

/** The assets with a market quoted in one of `quotes` that may count in the index from second `from` on. */
export async function loadAssetsQuotedIn(store: Store, quotes: readonly string[], from: number, params: IndexParams): Promise<string[]> {
  if (quotes.length === 0) return [];
  const rows = await store.rows<{ asset: string }>(quotedInSql, { quotes, from_s: from, volume_window_s: params.volumeWindowMinutes * 60 });
  return rows.map((r) => r.asset);
}
