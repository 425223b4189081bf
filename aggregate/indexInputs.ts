import { catalogVenues } from '../infra/catalog/catalog.ts';
import { loadStablecoinRates } from './currency/fxMeasured.ts';
import { loadUsdRates } from './currency/usdRates.ts';
import type { Store } from '../infra/store.ts';
import { staleLookbackMs, type IndexParams } from './indexPrice.ts';
import type { QuoteRates } from './indexQuoteRate.ts';
import { candleEntered, candleLeftIntervalWindow, candleLeftVolumeWindow, rowRefreshSeconds, tickContent, type BucketRow, type CrossedBookRow, type IndexInputs, type IndexState, type LastTradeRow, type MarketOfAsset, type PublishedIndex, type QuotedMarket, type SecondRow, type StatusRow, type SweepRange, type WindowRow } from './indexSweep.ts';

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

/**
 * Per market, its last trade in the stale look-back before the start of a minute, and the trades
 * of that look-back: the live steps of the minute take their own from these and their seconds.
 */
const minuteLastTradesSql = `
SELECT asset, venue, market, quote, argMaxMerge(last_price) AS price, toUnixTimestamp64Milli(max(last_trade_at)) AS lastTradeAt, sum(trade_count) AS trades
FROM market_seconds
WHERE second >= toDateTime({first_minute:UInt32} - {lookback_s:UInt32}, 'UTC') AND second < toDateTime({first_minute:UInt32}, 'UTC')
GROUP BY asset, venue, market, quote`;

/** Per market, the trades of market_seconds from {from_s} to before {to_s}: the minute that leaves a look-back when the next minute starts. */
const tradesBetweenSql = `
SELECT asset, venue, market, quote, sum(trade_count) AS trades
FROM market_seconds
WHERE second >= toDateTime({from_s:UInt32}, 'UTC') AND second < toDateTime({to_s:UInt32}, 'UTC')
GROUP BY asset, venue, market, quote`;

/**
 * What the store holds now of what a live step kept from the steps before (LiveInputs): per
 * second of the minute before {from_s}, its trades and the markets that traded; the trades of the
 * look-back before the minute (market_seconds) and of the windows before it (candles_1m). The
 * columns are qualified in WHERE: a bare `second` would be the select's alias (0 in the last two).
 */
const keptCountsSql = `
SELECT 'second' AS part, toUnixTimestamp(market_seconds.second) AS second, sum(trade_count) AS trades, uniqExact(asset, venue, market, quote) AS markets
FROM market_seconds
WHERE market_seconds.second >= toDateTime({first_minute:UInt32}, 'UTC') AND market_seconds.second < toDateTime({from_s:UInt32}, 'UTC')
GROUP BY second
UNION ALL
SELECT 'lookback' AS part, 0 AS second, sum(trade_count) AS trades, 0 AS markets
FROM market_seconds
WHERE market_seconds.second >= toDateTime({first_minute:UInt32} - {lookback_s:UInt32}, 'UTC') AND market_seconds.second < toDateTime({first_minute:UInt32}, 'UTC')
UNION ALL
SELECT 'windows' AS part, 0 AS second, sum(trade_count) AS trades, 0 AS markets
FROM candles_1m
WHERE bucket >= toDateTime({first_minute:UInt32} - greatest({volume_window_s:UInt32}, {interval_window_s:UInt32}), 'UTC') AND bucket < toDateTime({first_minute:UInt32}, 'UTC')`;

/**
 * The latest book of each market where it was measured at or after `from` (unix ms) and is crossed:
 * the only books the sweep counts (crossed_book). FINAL keeps the latest book before WHERE looks at
 * it. The column is qualified: a bare `ts` in WHERE is the select's alias (ms as Int64, compared as
 * seconds: every book passed).
 */
const crossedBooksSql = `
SELECT asset, venue, market, toUnixTimestamp64Milli(ts) AS ts
FROM market_quality FINAL
WHERE market_quality.ts >= fromUnixTimestamp64Milli({from:Int64}, 'UTC') AND spread_bps < 0 AND ${ofAssets}`;

/** The markets whose collector's last connection status before the range says disconnected: a row per market otherwise, every step. */
const disconnectedBeforeSql = `
SELECT asset, venue, market
FROM market_connections
WHERE ts < fromUnixTimestamp64Milli({from_ms:Int64}, 'UTC') AND ${ofAssets}
GROUP BY asset, venue, market
HAVING NOT argMax(connected, ts)`;

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

/** The newest second of index_ticks or of index_constituents_latest (written every few seconds and at a stop), and the newest computed_at. */
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

/** The parameters of windowsSql and bucketsSql: the range's first and last minute, the windows in seconds. */
type WindowParams = {
  assets: readonly string[];
  first_minute: number;
  last_minute: number;
  volume_window_s: number;
  interval_window_s: number;
};

/** A row of keptCountsSql. */
interface KeptCount {
  part: 'second' | 'lookback' | 'windows';
  second: number;
  trades: number;
  markets: number;
}

function sameSeconds(kept: readonly SecondRow[], stored: readonly KeptCount[]): boolean {
  const counts = new Map<number, { trades: number; markets: number }>();
  for (const r of kept) {
    const count = counts.get(r.second) ?? { trades: 0, markets: 0 };
    count.trades += r.trades;
    count.markets += 1;
    counts.set(r.second, count);
  }
  return stored.length === counts.size && stored.every((c) => counts.get(c.second)?.trades === c.trades && counts.get(c.second)?.markets === c.markets);
}

/** The trades the windows rows count: each row's count over the longer of its two windows, which the query's range spans. */
function tradesOfWindows(rows: readonly WindowRow[], params: IndexParams): number {
  const longer = params.volumeWindowMinutes >= params.intervalWindowMinutes ? 'windowTrades' : 'intervalTrades';
  return rows.reduce((sum, r) => sum + r[longer], 0);
}

type MinuteLastTradeRow = LastTradeRow & { trades: number };

/**
 * Per market, its last trade in the look-back before second `from`: the later of its last trade
 * before the minute (`atMinute`, whose look-back reaches further back) and its last second before
 * `from`, dropped when older than the look-back before `from`: what lastTradesSql reads.
 */
function lastTradesBefore(from: number, lookbackS: number, atMinute: readonly LastTradeRow[], seconds: readonly SecondRow[]): LastTradeRow[] {
  const last = new Map<string, LastTradeRow>();
  for (const r of atMinute) last.set(quotedMarketKey(r), r);
  for (const r of seconds) {
    if (r.second >= from) continue;
    const key = quotedMarketKey(r);
    if (r.lastTradeAt > (last.get(key)?.lastTradeAt ?? -Infinity)) last.set(key, { asset: r.asset, venue: r.venue, market: r.market, quote: r.quote, price: r.price, lastTradeAt: r.lastTradeAt });
  }
  return [...last.values()].filter((r) => Math.floor(r.lastTradeAt / 1000) >= from - lookbackS);
}

const quotedMarketKey = (r: QuotedMarket) => `${r.asset}\u0000${r.venue}\u0000${r.market}\u0000${r.quote}`;

/**
 * How often a live input was kept from the steps before, rolled from the minute before (the
 * windows and the last trades before a minute, at the next minute), or read again.
 */
export type LiveInputReads = { seconds: { kept: number; read: number }; lastTrades: { kept: number; rolled: number; read: number }; windows: { kept: number; rolled: number; read: number } };

/** What the live steps of a minute keep of the time before it: the windows, and the last trades of the look-back. */
interface KeptMinute {
  minute: number;
  windows: WindowRow[];
  /** The trades the windows count (tradesOfWindows): checked against the store's count. */
  windowTrades: number;
  atMinute: MinuteLastTradeRow[];
  /** The trades of the look-back: checked against the store's count. */
  lookbackTrades: number;
}

function keptMinute(minute: number, windows: WindowRow[], atMinute: MinuteLastTradeRow[], params: IndexParams): KeptMinute {
  return { minute, windows, windowTrades: tradesOfWindows(windows, params), atMinute, lookbackTrades: atMinute.reduce((sum, r) => sum + r.trades, 0) };
}

/**
 * The windows at the start of `minute`, from those at the start of the minute before and the 1m
 * candles entering or leaving them then (bucketsSql from that minute to this one), as the sweep
 * rolls them (candleEntered and the rest); a market left with no trade in either window is dropped,
 * as windowsSql's HAVING drops it.
 */
export function rollWindows(windows: readonly WindowRow[], buckets: readonly BucketRow[], minute: number, params: IndexParams): WindowRow[] {
  const rows = new Map(windows.map((r) => [quotedMarketKey(r), { ...r }]));
  const rowOf = (c: BucketRow) => {
    const key = quotedMarketKey(c);
    let row = rows.get(key);
    if (!row) rows.set(key, (row = { asset: c.asset, venue: c.venue, market: c.market, quote: c.quote, windowNotional: 0, windowTrades: 0, intervalTrades: 0, close: c.close }));
    return row;
  };
  for (const c of buckets) {
    if (c.bucket === minute - 60) {
      const row = rowOf(c);
      candleEntered(row, c);
      row.close = c.close;
    }
    if (c.bucket === minute - 60 - params.volumeWindowMinutes * 60) candleLeftVolumeWindow(rowOf(c), c);
    if (c.bucket === minute - 60 - params.intervalWindowMinutes * 60) candleLeftIntervalWindow(rowOf(c), c);
  }
  return [...rows.values()].filter((r) => r.windowTrades > 0 || r.intervalTrades > 0);
}

/**
 * Per market, its last trade and trades in the look-back before `minute`, from those before the
 * minute before, that minute's seconds, and the trades of the minute that left the look-back
 * (tradesBetweenSql); a market with none left is dropped, as minuteLastTradesSql has no row for it.
 * Undefined when the minute that left holds trades of a market the look-back before did not: what
 * was kept no longer matches the store.
 */
export function rollLastTrades(atMinute: readonly MinuteLastTradeRow[], seconds: readonly SecondRow[], left: readonly (QuotedMarket & { trades: number })[], minute: number): MinuteLastTradeRow[] | undefined {
  const rows = new Map(atMinute.map((r) => [quotedMarketKey(r), { ...r }]));
  for (const r of seconds) {
    if (r.second < minute - 60 || r.second >= minute) continue;
    const key = quotedMarketKey(r);
    const row = rows.get(key) ?? { asset: r.asset, venue: r.venue, market: r.market, quote: r.quote, price: r.price, lastTradeAt: r.lastTradeAt, trades: 0 };
    row.trades += r.trades;
    if (r.lastTradeAt >= row.lastTradeAt) Object.assign(row, { price: r.price, lastTradeAt: r.lastTradeAt });
    rows.set(key, row);
  }
  for (const r of left) {
    const row = rows.get(quotedMarketKey(r));
    if (!row) return undefined;
    row.trades -= r.trades;
  }
  return [...rows.values()].filter((r) => r.trades > 0);
}

/**
 * What the live steps of one minute share, kept from one step to the next. Every live step
 * computes its range again from the start of its minute, so each would read up to 70 seconds of
 * every market, the 24-hour windows before the minute and the look-back before its range: with
 * this, it reads the seconds of its own range, and takes the rest from what the steps before read
 * once the store's counts show that none of it changed since (a late trade, whichever sink stored
 * it). At a new minute, the windows and the last trades before it are rolled from the minute
 * before (one minute of candles and of seconds read), checked against the same counts. `forget`
 * drops it all: the runner calls it when it goes back for every asset, and when a
 * join moved trades from one asset to another, which keeps the counts.
 */
export class LiveInputs {
  #minute: KeptMinute | undefined;
  #seconds: { minute: number; through: number; rows: SecondRow[] } | undefined;
  readonly reads: LiveInputReads = { seconds: { kept: 0, read: 0 }, lastTrades: { kept: 0, rolled: 0, read: 0 }, windows: { kept: 0, rolled: 0, read: 0 } };

  /** `windowParams`: those of loadIndexInputs, of every asset. */
  async load(store: Store, range: SweepRange, params: IndexParams, windowParams: WindowParams): Promise<Pick<IndexInputs, 'windows' | 'lastTrades' | 'seconds'>> {
    const firstMinute = windowParams.first_minute;
    const lookbackS = Math.ceil(staleLookbackMs(params) / 1000);
    const minute = this.#minute?.minute === firstMinute ? this.#minute : undefined;
    const seconds = this.#seconds?.minute === firstMinute && range.from > firstMinute && range.from - 1 <= this.#seconds.through ? this.#seconds : undefined;
    const rolling = !minute && this.#canRoll(firstMinute);
    const [counts, fresh, rolled] = minute || seconds || rolling
      ? await Promise.all([
          store.rows<KeptCount>(keptCountsSql, { ...windowParams, from_s: range.from, lookback_s: lookbackS }),
          seconds ? store.rows<SecondRow>(secondsSql, { assets: [], from_s: range.from, to_s: range.to }) : [],
          rolling ? this.#roll(store, firstMinute, params, lookbackS) : undefined,
        ])
      : [[], [], undefined];
    // What was kept, or rolled from the minute before, counts what the store holds now, or is read again.
    const candidate = minute ?? rolled;
    const storedTrades = (part: KeptCount['part']) => counts.find((c) => c.part === part)?.trades;
    const keptWindows = candidate && storedTrades('windows') === candidate.windowTrades ? candidate.windows : undefined;
    const keptAtMinute = candidate && storedTrades('lookback') === candidate.lookbackTrades ? candidate.atMinute : undefined;
    const before = seconds?.rows.filter((r) => r.second < range.from);
    const keptSeconds = before && sameSeconds(before, counts.filter((c) => c.part === 'second')) ? [...before, ...fresh] : undefined;
    const [windows, atMinute, secondRows] = await Promise.all([
      keptWindows ?? store.rows<WindowRow>(windowsSql, windowParams),
      keptAtMinute ?? store.rows<MinuteLastTradeRow>(minuteLastTradesSql, { first_minute: firstMinute, lookback_s: lookbackS }),
      keptSeconds ?? store.rows<SecondRow>(secondsSql, { assets: [], from_s: firstMinute, to_s: range.to }),
    ]);
    const how = minute ? 'kept' : 'rolled';
    this.reads.windows[keptWindows ? how : 'read'] += 1;
    this.reads.lastTrades[keptAtMinute ? how : 'read'] += 1;
    this.reads.seconds[keptSeconds ? 'kept' : 'read'] += 1;
    this.#minute = keptMinute(firstMinute, windows, atMinute, params);
    this.#seconds = { minute: firstMinute, through: range.to, rows: secondRows };
    return { windows, seconds: secondRows, lastTrades: lastTradesBefore(range.from, lookbackS, atMinute, secondRows) };
  }

  /** Whether what the minute before kept can roll to `minute`: its windows and look-back, and its seconds to its end. */
  #canRoll(minute: number): boolean {
    return this.#minute?.minute === minute - 60 && this.#seconds?.minute === minute - 60 && this.#seconds.through >= minute - 1;
  }

  /**
   * The minute before's windows and last trades rolled to `minute`: reads the 1m candles entering
   * or leaving the windows and the trades leaving the look-back (one minute each), not the 24 hours
   * of candles and the look-back's seconds. The caller checks them against the store's counts.
   */
  async #roll(store: Store, minute: number, params: IndexParams, lookbackS: number): Promise<KeptMinute | undefined> {
    const { windows, atMinute } = this.#minute!;
    const secondRows = this.#seconds!.rows;
    const previous = minute - 60;
    const [buckets, left] = await Promise.all([
      store.rows<BucketRow>(bucketsSql, { assets: [], first_minute: previous, last_minute: minute, volume_window_s: params.volumeWindowMinutes * 60, interval_window_s: params.intervalWindowMinutes * 60 }),
      store.rows<QuotedMarket & { trades: number }>(tradesBetweenSql, { from_s: previous - lookbackS, to_s: minute - lookbackS }),
    ]);
    const lastTrades = rollLastTrades(atMinute, secondRows, left, minute);
    return lastTrades && keptMinute(minute, rollWindows(windows, buckets, minute, params), lastTrades, params);
  }

  forget(): void {
    this.#minute = undefined;
    this.#seconds = undefined;
  }
}

/** The inputs of `range`, of every asset, or of `assets` alone; a live step of every asset takes its windows, last trades and seconds through `live`. */
export async function loadIndexInputs(store: Store, range: SweepRange, params: IndexParams, assets: readonly string[] = [], live?: LiveInputs): Promise<IndexInputs> {
  const { from, to } = range;
  const firstMinute = Math.floor(from / 60) * 60;
  const windowParams: WindowParams = {
    assets,
    first_minute: firstMinute,
    last_minute: Math.floor(to / 60) * 60,
    volume_window_s: params.volumeWindowMinutes * 60,
    interval_window_s: params.intervalWindowMinutes * 60,
  };
  const readAll = async (): Promise<Pick<IndexInputs, 'windows' | 'lastTrades' | 'seconds'>> => {
    const [windows, lastTrades, seconds] = await Promise.all([
      store.rows<WindowRow>(windowsSql, windowParams),
      store.rows<LastTradeRow>(lastTradesSql, { assets, from_s: from - Math.ceil(staleLookbackMs(params) / 1000), to_s: from }),
      store.rows<SecondRow>(secondsSql, { assets, from_s: firstMinute, to_s: to }),
    ]);
    return { windows, lastTrades, seconds };
  };
  const [{ windows, lastTrades, seconds }, buckets, crossedBooks, disconnectedBefore, statusChanges] = await Promise.all([
    live && assets.length === 0 ? live.load(store, range, params, windowParams) : readAll(),
    // In a range within one minute no 1m candle enters or leaves the windows (bucketsSql's ranges
    // are empty): most live steps. Not asked, it does not wait in the store's queue.
    windowParams.first_minute === windowParams.last_minute ? [] : store.rows<BucketRow>(bucketsSql, windowParams),
    store.rows<CrossedBookRow>(crossedBooksSql, { assets, from: from * 1000 - params.crossedBookMaxAgeMs }),
    store.rows<MarketOfAsset>(disconnectedBeforeSql, { assets, from_ms: from * 1000 }),
    store.rows<StatusRow>(statusChangesSql, { assets, from_ms: from * 1000, to_ms: (to + 1) * 1000 }),
  ]);
  return { windows, buckets, lastTrades, seconds, crossedBooks, disconnectedBefore, statusChanges, perpetualVenues };
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
