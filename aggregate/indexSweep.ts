import {
  computeIndexSecond,
  marketKey,
  meanTradeIntervalMs,
  staleAfterMs,
  type ExclusionReason,
  type IndexParams,
  type IndexSecond,
  type IndexStatus,
  type MarketInput,
  type PreviousIndex,
} from './indexPrice.ts';
import { assetOrder, quoteIndexAssets, quoteRate, valuedThroughIndex, type QuoteRates } from './indexQuoteRate.ts';

/**
 * The seconds of a range, walked event by event over the inputs of indexInputs.ts: pure (no
 * store, no clock). For each asset and second it builds the candidate markets' state and calls
 * computeIndexSecond (the methodology); it returns the index_ticks rows to write, the verdicts of
 * the range's last second (index_constituents_latest) and the state at the end of the kept second.
 */

/** The columns that name a market of an asset. */
export interface MarketOfAsset { asset: string; venue: string; market: string }
export interface QuotedMarket extends MarketOfAsset { quote: string }
export interface WindowRow extends QuotedMarket { windowNotional: number; windowTrades: number; intervalTrades: number; close: number }
export interface BucketRow extends QuotedMarket { bucket: number; notional: number; trades: number; close: number }

/** A market's sums over its two windows: a WindowRow's, and the sweep's state of the market. */
export interface WindowSums { windowNotional: number; windowTrades: number; intervalTrades: number }

/** The 1m candle `c` enters both windows (a minute after it started). */
export function candleEntered(w: WindowSums, c: BucketRow): void {
  w.windowNotional += c.notional;
  w.windowTrades += c.trades;
  w.intervalTrades += c.trades;
}

/** The 1m candle `c` leaves the volume window. */
export function candleLeftVolumeWindow(w: WindowSums, c: BucketRow): void {
  w.windowTrades -= c.trades;
  // Exactly 0 once the last candle left: sums of floats would leave a residue.
  w.windowNotional = w.windowTrades > 0 ? w.windowNotional - c.notional : 0;
}

/** The 1m candle `c` leaves the interval window. */
export function candleLeftIntervalWindow(w: WindowSums, c: BucketRow): void {
  w.intervalTrades -= c.trades;
}
export interface LastTradeRow extends QuotedMarket { price: number; lastTradeAt: number }
export interface SecondRow extends LastTradeRow { second: number; notional: number; volume: number; trades: number }
export interface CrossedBookRow extends MarketOfAsset { ts: number }
export interface StatusRow extends MarketOfAsset { connected: number | boolean; at: number }

/** Everything the sweep of a range reads, as plain rows (the queries of indexInputs.ts say what each holds). */
export interface IndexInputs {
  windows: WindowRow[];
  buckets: BucketRow[];
  lastTrades: LastTradeRow[];
  seconds: SecondRow[];
  /** The latest book of each market within the crossed-book age, where it is crossed. */
  crossedBooks: CrossedBookRow[];
  /** The markets disconnected at the range's start (their last status before it). */
  disconnectedBefore: MarketOfAsset[];
  /** In time order. */
  statusChanges: StatusRow[];
  /** Venues whose markets are perpetuals (the catalog's contract); every other venue is spot. */
  perpetualVenues: ReadonlySet<string>;
}

/**
 * Seconds `from`..`to` (unix s, inclusive). The state at the end of second `keepAt` is returned when
 * it lies in the range: where the next range starts from (its `from` - 1). One state, not one per
 * second: each is a copy of every asset's index, thousands of entries with the whole market.
 */
export interface SweepRange {
  from: number;
  to: number;
  keepAt: number;
}

/** An asset's published index at the end of a second. */
export interface PublishedIndex extends PreviousIndex {
  /** tickContent of its row: a second equal to the one before, without constituent trades, is not stored. */
  content: string;
  /** The second of its latest row (stored, or written by this sweep): see rowRefreshSeconds. */
  writtenAt: number;
}

/**
 * An asset with a price gets a row at least this often, also when nothing in it changed: a price
 * carried by the fail-closed rule stays the same row for as long as unrated or perpetual markets
 * keep trading. The readers that look back a bounded time for an asset's latest row then find it:
 * loadIndexState (on a restart or a revisit) and latestIndexPrices (48 h).
 */
export function rowRefreshSeconds(params: IndexParams): number {
  return Math.min(params.volumeWindowMinutes * 60, 86_400);
}
/** Every asset with a price at the end of a second; an asset missing from it had none. */
export type IndexState = ReadonlyMap<string, PublishedIndex>;

/** What index_ticks may hold already, as far as the runner knows. */
export interface TickWrites {
  /** Seconds up to this one may hold rows from an earlier computation: written again whatever their content. */
  storedThrough: number;
  /**
   * Per tickKey, the writtenContent of the row this runner wrote (an identical recomputation is
   * not written again), or '' for a row an earlier computation stored, which a recomputation
   * replaces whatever its content.
   */
  written: ReadonlyMap<string, string>;
}

/** A row of index_ticks. */
export interface TickRow {
  asset: string;
  second: number;
  price: number;
  /** none: the asset has no index price from this second on. */
  status: IndexStatus | 'none';
  constituents: string[];
  excluded: Record<string, ExclusionReason>;
  volume: number;
  volume_usd: number;
  trade_count: number;
  last_trade_at: number;
  computed_at: number;
}

/** A row of index_constituents_latest: one candidate market's verdict at the end of the range. */
export interface ConstituentRow {
  asset: string;
  venue: string;
  market: string;
  quote: string;
  price_usd: number | null;
  volume_24h_usd: number;
  weight: number;
  excluded: boolean;
  reason: ExclusionReason | '';
  ts: number;
}

/** What a row says of the asset's index, apart from the volumes of its second. */
export type TickContent = Pick<TickRow, 'price' | 'constituents' | 'last_trade_at'> & { status: string; excluded: Readonly<Record<string, string>> };

/** The one serialization of what an index row says: equal for a computed row and the same row read back. */
export function tickContent(row: TickContent): string {
  const excluded = Object.entries(row.excluded).sort(([a], [b]) => (a < b ? -1 : 1));
  return JSON.stringify([row.price, row.status, row.constituents, excluded, row.last_trade_at]);
}

/** What the runner records of a row it wrote: its content and the volumes of its second. */
export function writtenContent(row: TickRow): string {
  return JSON.stringify([tickContent(row), row.volume, row.volume_usd, row.trade_count]);
}

export const tickKey = (row: { asset: string; second: number }) => `${row.asset}\u0000${row.second}`;

export interface SweepResult {
  /** index_ticks rows to write, with their writtenContent by tickKey (to record once inserted). */
  rows: TickRow[];
  written: Map<string, string>;
  constituents: ConstituentRow[];
  /** Per asset, its verdicts at its last evaluation up to `to` (SweepArgs.verdicts: what the next sweep continues from). */
  verdicts: IndexVerdicts;
  /** The state at the end of second `keepAt`, if it lies in the range. */
  states: Map<number, IndexState>;
  /** Assets that had any candidate market in the range. */
  assets: number;
}

/** What the sweep knows of one market while it walks the seconds of a range. */
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

const noTrades = { notional: 0, volume: 0, trades: 0 };

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

/** The seconds after `t` at which a market may turn stale: the first whose end is past the stale age after its last trade, and its neighbours (rounding). */
function staleFlipsAfter(st: MarketState, t: number, params: IndexParams): number {
  if (st.lastTradeAt === null || !(st.windowNotional + st.minuteNotional > 0)) return Infinity;
  const flip = Math.floor((st.lastTradeAt + staleAfterMs(meanTradeIntervalMs(st.intervalTrades, params), params)) / 1000);
  let next = Infinity;
  for (const c of [flip - 1, flip, flip + 1]) if (c > t && c < next) next = c;
  return next;
}

/** Adds `asset` to the set of `second` in `bySecond`. */
function addAt(bySecond: Map<number, Set<string>>, second: number, asset: string): void {
  let assets = bySecond.get(second);
  if (!assets) bySecond.set(second, (assets = new Set()));
  assets.add(asset);
}

/** The seconds at which a book measured at `at` starts and stops counting for crossed_book. */
function edges(at: number, maxAgeMs: number): number[] {
  const first = Math.ceil((at - maxAgeMs) / 1000) - 1;
  const past = Math.floor((at + maxAgeMs) / 1000);
  return [first - 1, first, first + 1, past - 1, past, past + 1];
}

function tickRow(asset: string, second: number, r: IndexSecond, computedAt: number): TickRow {
  const included = r.status === 'fail_closed' ? [] : r.markets.filter((m) => m.reason === null).map(marketKey);
  const excluded = Object.fromEntries(r.markets.flatMap((m) => (m.reason === null ? [] : [[marketKey(m), m.reason]])));
  return {
    asset,
    second,
    price: r.price!,
    status: r.status,
    constituents: included,
    excluded,
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

function constituentRow(asset: string, m: IndexSecond['markets'][number], ts: number): ConstituentRow {
  return {
    asset,
    venue: m.venue,
    market: m.market,
    quote: m.quote,
    price_usd: m.priceUsd,
    volume_24h_usd: m.volume24hUsd,
    weight: m.weight,
    excluded: m.reason !== null,
    reason: m.reason ?? '',
    ts,
  };
}

/** Per asset with a candidate market, computeIndexSecond's result at its last evaluation. */
export type IndexVerdicts = ReadonlyMap<string, IndexSecond>;

/** What sweepIndex is given. */
export interface SweepArgs {
  range: SweepRange;
  inputs: IndexInputs;
  prior: IndexState;
  /**
   * Given when `prior` is the state a sweep kept for `from - 1` on the same inputs, with that
   * sweep's verdicts (the live loop, step after step): the first second then computes only the
   * assets whose inputs change in it, as every later second does, and an asset not computed in the
   * range keeps these verdicts. Without it (a prior read from the store) every asset is computed
   * at `from`: each of thousands, every step, was half of a live step's sweep.
   */
  verdicts?: IndexVerdicts;
  params: IndexParams;
  rates: QuoteRates;
  writes: TickWrites;
  /** computed_at of the rows: the newest computation of a second wins. */
  computedAt: number;
}

/**
 * The index of every asset for the seconds of `range`, starting from `prior` (the state at the
 * end of `from - 1`). Rows: one for a second in which a constituent traded or anything else of the
 * row changed (price, status, constituents, exclusions, last trade), a `none` row when an asset
 * loses its price, the same row again once the latest is rowRefreshSeconds old, and a row for
 * every second that may hold one already (`writes`) unless the same row was written there;
 * readers take the latest row at or before a second. Constituents: the verdict on every candidate
 * market at `to`.
 */
export function sweepIndex(args: SweepArgs): SweepResult {
  return new RangeSweep(args).run();
}

/** The key of an asset's market in the sets of crossed books and disconnected markets. */
const assetMarketKey = (asset: string, m: { venue: string; market: string }) => `${asset}\u0000${marketKey(m)}`;

/**
 * One walk over a range's seconds: the markets' state as the seconds go by (RangeSweep's market
 * part), the seconds at which something can change (its schedule), and the rows written so far.
 */
class RangeSweep {
  private readonly range: SweepRange;
  private readonly inputs: IndexInputs;
  private readonly params: IndexParams;
  private readonly rates: QuoteRates;
  private readonly writes: TickWrites;
  private readonly computedAt: number;
  private readonly firstMinute: number;
  private readonly lastMinute: number;
  private readonly volumeWindowS: number;
  private readonly intervalWindowS: number;

  // The markets.
  private readonly states = new Map<string, Map<string, MarketState>>();
  private readonly bucketsByStart: Map<number, BucketRow[]>;
  private readonly secondsByStart: Map<number, SecondRow[]>;
  private readonly crossedAt: Map<string, number>;
  /** asset + venue:market of the markets whose collector last said their socket is down, at the second being evaluated. */
  private readonly disconnected: Set<string>;
  private statusesApplied = 0;
  private readonly assets: string[];
  /** Per asset, its markets in key order, so the stored constituents and verdicts do not depend on the order rows arrived in. */
  private readonly marketsOf: Map<string, MarketState[]>;
  private readonly valuedThroughIndexPrice: Set<string>;

  // What is written and kept.
  private readonly rows: TickRow[] = [];
  private readonly constituents: ConstituentRow[] = [];
  private readonly kept = new Map<number, IndexState>();
  private readonly written = new Map<string, string>();
  private readonly published: Map<string, PublishedIndex>;
  /**
   * The index prices of the second being evaluated, as quoteRate reads them for markets quoted in
   * BTC or ETH: those assets come first in `assets` (assetOrder), so their entry is already this second's.
   */
  private readonly indexNow = { get: (asset: string): number | undefined => this.published.get(asset)?.price };
  /** Per asset: its result at the last second it was evaluated (the verdicts written at `to`). */
  private readonly lastResult: Map<string, IndexSecond>;
  /** Whether the first second computes only the assets whose inputs change in it (SweepArgs.verdicts). */
  private readonly continues: boolean;

  // The schedule: only the seconds at which something can change are evaluated (see nextEvent);
  // every other second equals the one before it and has no trade, so it would store nothing.
  private readonly tradeSeconds: number[];
  private readonly crossedEdges: number[];
  private readonly forcedSeconds: number[];
  /** A status takes effect in the second it was published in (the state at the end of that second). */
  private readonly statusSeconds: number[];
  /** A minute matters when a candle joins the windows (the minute before traded) or leaves one of them. */
  private readonly changedMinutes: number[];
  private readonly tradedAt = new Map<number, Set<string>>();
  private readonly crossedEdgeAt = new Map<number, Set<string>>();
  private readonly forcedAt = new Map<number, Set<string>>();
  /** Per asset: the next second one of its markets may turn stale (set when it is evaluated). */
  private readonly recheckAt = new Map<string, number>();
  private readonly refreshS: number;
  /** Per asset with a price: the second its row is written again though unchanged (rowRefreshSeconds). */
  private readonly refreshAt: Map<string, number>;

  constructor(args: SweepArgs) {
    const { range, inputs, prior, params, rates, writes, computedAt, verdicts } = args;
    this.range = range;
    this.inputs = inputs;
    this.params = params;
    this.rates = rates;
    this.writes = writes;
    this.computedAt = computedAt;
    this.firstMinute = Math.floor(range.from / 60) * 60;
    this.lastMinute = Math.floor(range.to / 60) * 60;
    this.volumeWindowS = params.volumeWindowMinutes * 60;
    this.intervalWindowS = params.intervalWindowMinutes * 60;

    for (const r of inputs.lastTrades) Object.assign(this.stateOf(r), { lastPrice: r.price, lastTradeAt: r.lastTradeAt });
    for (const r of inputs.windows) {
      Object.assign(this.stateOf(r), { windowNotional: r.windowNotional, windowTrades: r.windowTrades, intervalTrades: r.intervalTrades });
      if (r.windowTrades > 0) this.stateOf(r).windowClose = r.close;
    }
    this.bucketsByStart = Map.groupBy(inputs.buckets, (r) => r.bucket);
    this.secondsByStart = Map.groupBy(inputs.seconds, (r) => r.second);
    this.crossedAt = new Map(inputs.crossedBooks.map((b) => [assetMarketKey(b.asset, b), b.ts]));
    this.disconnected = new Set(inputs.disconnectedBefore.map((r) => assetMarketKey(r.asset, r)));
    for (const r of inputs.buckets) this.stateOf(r);
    for (const r of inputs.seconds) this.stateOf(r);
    for (const asset of prior.keys()) if (!this.states.has(asset)) this.states.set(asset, new Map());
    this.assets = [...this.states.keys()].sort(assetOrder);
    this.marketsOf = new Map(this.assets.map((a) => [a, [...this.states.get(a)!.entries()].sort(([x], [y]) => (x < y ? -1 : 1)).map(([, st]) => st)]));
    this.valuedThroughIndexPrice = new Set(this.assets.filter((a) => this.marketsOf.get(a)!.some((st) => valuedThroughIndex(st.quote))));
    this.published = new Map(prior);
    this.lastResult = new Map(verdicts);
    this.continues = verdicts !== undefined;
    // An asset with neither a market nor a price any more has no verdicts to carry.
    for (const asset of this.lastResult.keys()) if (!this.states.has(asset)) this.lastResult.delete(asset);

    this.tradeSeconds = [...this.secondsByStart.keys()].sort((x, y) => x - y);
    this.crossedEdges = [...this.crossedAt.values()].flatMap((at) => edges(at, params.crossedBookMaxAgeMs)).sort((x, y) => x - y);
    const forced = new Set<number>();
    for (let t = range.from; t <= Math.min(range.to, writes.storedThrough); t++) forced.add(t);
    for (const key of writes.written.keys()) forced.add(Number(key.split('\u0000')[1]));
    this.forcedSeconds = [...forced].filter((t) => t >= range.from && t <= range.to).sort((x, y) => x - y);
    this.statusSeconds = [...new Set(inputs.statusChanges.map((r) => Math.floor(r.at / 1000)))].sort((x, y) => x - y);
    this.changedMinutes = [...new Set(inputs.buckets.flatMap((r) => [r.bucket + 60, r.bucket + 60 + this.volumeWindowS, r.bucket + 60 + this.intervalWindowS]))]
      .filter((m) => m > this.firstMinute && m <= this.lastMinute)
      .sort((x, y) => x - y);
    // An asset whose inputs did not change since it was last evaluated has the same index, the same
    // verdicts and no trade in the second (computeIndexSecond settles after one second on unchanged
    // inputs, outlier hysteresis included): it is carried, not computed again. Its inputs change with
    // its trades, its crossed books' windows, its connection statuses, a market turning stale, a row
    // to replace, a new minute (every asset), and for markets quoted in BTC or ETH, that index moving.
    for (const r of inputs.seconds) addAt(this.tradedAt, r.second, r.asset);
    for (const [key, at] of this.crossedAt) for (const e of edges(at, params.crossedBookMaxAgeMs)) addAt(this.crossedEdgeAt, e, key.split('\u0000')[0]!);
    for (const key of writes.written.keys()) {
      const [asset, second] = key.split('\u0000');
      addAt(this.forcedAt, Number(second), asset!);
    }
    this.refreshS = rowRefreshSeconds(params);
    this.refreshAt = new Map([...prior].map(([a, p]) => [a, p.writtenAt + this.refreshS]));
  }

  run(): SweepResult {
    const { range } = this;
    let minute = this.firstMinute;
    let evaluated = range.from - 1;
    for (let s = this.firstMinute; s <= range.to; s = this.nextEvent(s)) {
      const newMinute = Math.floor(s / 60) * 60 !== minute;
      if (newMinute) {
        for (let m = minute + 60; m <= Math.floor(s / 60) * 60; m += 60) this.advanceWindows(m);
        minute = Math.floor(s / 60) * 60;
      }
      this.enterSecond(s, newMinute);
      if (s < range.from) continue;
      const statusAssets = this.applyStatuses(s);
      // Every asset at a minute's start (its windows move), in seconds that may hold rows of an
      // earlier computation, and at the first second unless the sweep continues from its prior's.
      const everyAsset = (evaluated < range.from && !this.continues) || newMinute || s % 60 === 0 || s <= this.writes.storedThrough;
      if (evaluated < range.from && !everyAsset) this.scheduleStaleTurns(s);
      const changed = everyAsset ? undefined : this.changedAt(s, statusAssets);
      // A second skipped had the state of the last one evaluated: the state now.
      if (evaluated <= range.keepAt && range.keepAt < s) this.keep();
      evaluated = s;
      this.evaluateSecond(s, changed);
      if (s === range.to) {
        for (const asset of this.assets) for (const m of this.lastResult.get(asset)?.markets ?? []) this.constituents.push(constituentRow(asset, m, (s + 1) * 1000));
      }
      if (s === range.keepAt) this.keep();
    }
    const assets = [...this.states.values()].filter((m) => m.size > 0).length;
    return { rows: this.rows, written: this.written, constituents: this.constituents, verdicts: this.lastResult, states: this.kept, assets };
  }

  /**
   * Before a first second that computes only the assets whose inputs change: when each asset's
   * markets may turn stale from that second on, as its last evaluation would have set it.
   */
  private scheduleStaleTurns(first: number): void {
    for (const asset of this.assets) this.recheckAt.set(asset, this.nextStaleTurn(asset, first - 1));
  }

  /** The first second after `t` at which one of `asset`'s markets may turn stale. */
  private nextStaleTurn(asset: string, t: number): number {
    let next = Infinity;
    for (const st of this.marketsOf.get(asset)!) next = Math.min(next, staleFlipsAfter(st, t, this.params));
    return next;
  }

  /** The state at the end of `keepAt`: a copy, as the seconds after it change `published` in place. */
  private keep(): void {
    if (this.range.keepAt >= this.range.from) this.kept.set(this.range.keepAt, new Map(this.published));
  }

  private stateOf(r: QuotedMarket): MarketState {
    let markets = this.states.get(r.asset);
    if (!markets) this.states.set(r.asset, (markets = new Map()));
    const key = marketKey(r);
    let s = markets.get(key);
    if (!s) {
      s = {
        venue: r.venue, market: r.market, quote: r.quote, contract: this.inputs.perpetualVenues.has(r.venue) ? 'perpetual' : 'spot',
        lastPrice: undefined, lastTradeAt: null,
        windowNotional: 0, windowTrades: 0, windowClose: undefined, intervalTrades: 0, minuteNotional: 0, inSecond: noTrades,
      };
      markets.set(key, s);
    }
    return s;
  }

  private write(row: TickRow): void {
    const key = tickKey(row);
    const content = writtenContent(row);
    if (this.writes.written.get(key) === content) return;
    this.written.set(key, content);
    this.rows.push(row);
  }

  /** A row is written for an asset in a second that may hold one already: the recomputation replaces it. */
  private mustWrite(asset: string, t: number): boolean {
    return t <= this.writes.storedThrough || this.writes.written.has(tickKey({ asset, second: t }));
  }

  /** Rolls every market's windows forward from the start of minute `m - 60` to the start of `m`. */
  private advanceWindows(m: number): void {
    for (const r of this.bucketsByStart.get(m - 60) ?? []) {
      const st = this.stateOf(r);
      candleEntered(st, r);
      st.windowClose = r.close;
    }
    for (const r of this.bucketsByStart.get(m - 60 - this.volumeWindowS) ?? []) candleLeftVolumeWindow(this.stateOf(r), r);
    for (const r of this.bucketsByStart.get(m - 60 - this.intervalWindowS) ?? []) candleLeftIntervalWindow(this.stateOf(r), r);
  }

  /** The markets' state as second `s` starts (a new minute clears the minute's value), then its trades. */
  private enterSecond(s: number, newMinute: boolean): void {
    for (const markets of this.states.values()) {
      for (const st of markets.values()) {
        if (newMinute) st.minuteNotional = 0;
        // The last trade before this minute, for a market whose last trade is older than the stale look-back.
        if (st.lastPrice === undefined && st.windowTrades > 0) st.lastPrice = st.windowClose;
        st.inSecond = noTrades;
      }
    }
    for (const r of this.secondsByStart.get(s) ?? []) {
      const st = this.stateOf(r);
      st.lastPrice = r.price;
      st.lastTradeAt = r.lastTradeAt;
      st.minuteNotional += r.notional;
      st.inSecond = { notional: r.notional, volume: r.volume, trades: r.trades };
    }
  }

  /** Applies the connection statuses published up to the end of `s`; returns the assets they name. */
  private applyStatuses(s: number): Set<string> {
    const { statusChanges } = this.inputs;
    const statusAssets = new Set<string>();
    for (; this.statusesApplied < statusChanges.length && statusChanges[this.statusesApplied]!.at < (s + 1) * 1000; this.statusesApplied++) {
      const r = statusChanges[this.statusesApplied]!;
      const key = assetMarketKey(r.asset, r);
      if (r.connected) this.disconnected.delete(key);
      else this.disconnected.add(key);
      statusAssets.add(r.asset);
    }
    return statusAssets;
  }

  /** The assets whose index may differ at `s` from the last second evaluated (a new minute or the first second: every asset, decided by the caller). */
  private changedAt(s: number, statusAssets: ReadonlySet<string>): Set<string> {
    const changed = new Set<string>(statusAssets);
    for (const bySecond of [this.tradedAt, this.crossedEdgeAt, this.forcedAt]) for (const asset of bySecond.get(s) ?? []) changed.add(asset);
    for (const dueAt of [this.recheckAt, this.refreshAt]) for (const [asset, at] of dueAt) if (at <= s) changed.add(asset);
    return changed;
  }

  /**
   * The next second whose index may differ from `t`'s: a trade, a minute, a market turning stale, a
   * crossed book's window, a connection status, or an unchanged row falling due again (refreshAt). A
   * market's stale turn is its asset's recheckAt: its state changes only with a trade or a new
   * minute, which evaluate the asset again. (Before `from` no asset is evaluated, and none needs to be.)
   */
  private nextEvent(t: number): number {
    const { from, to } = this.range;
    const ahead = (sorted: number[]) => sorted[firstAbove(sorted, t)] ?? Infinity;
    let next = Math.min(ahead(this.tradeSeconds), ahead(this.changedMinutes), ahead(this.crossedEdges), ahead(this.forcedSeconds), ahead(this.statusSeconds), t < from ? from : t < to ? to : Infinity);
    for (const dueAt of [this.recheckAt, this.refreshAt]) for (const at of dueAt.values()) if (at > t && at < next) next = at;
    return next;
  }

  /** Every asset at second `s`: computed where `changed` (undefined: all) says, or where a BTC or ETH index it is valued through moved; carried otherwise. */
  private evaluateSecond(s: number, changed: Set<string> | undefined): void {
    let indexQuoteMoved = false;
    for (const asset of this.assets) {
      if (changed && !changed.has(asset) && !(indexQuoteMoved && this.valuedThroughIndexPrice.has(asset))) continue;
      // `published` is changed in place: an asset's entry is read before its own evaluation replaces it.
      const previous = this.published.get(asset);
      this.evaluateAsset(asset, s, previous);
      if (quoteIndexAssets.includes(asset) && this.published.get(asset)?.price !== previous?.price) indexQuoteMoved = true;
    }
  }

  /** The candidate markets of `asset` at second `s`, as computeIndexSecond takes them. */
  private candidates(asset: string, s: number): MarketInput[] {
    const candidates: MarketInput[] = [];
    for (const st of this.marketsOf.get(asset)!) {
      const windowNotional = st.windowNotional + st.minuteNotional;
      if (!(windowNotional > 0) || st.lastPrice === undefined) continue;
      const bookAt = this.crossedAt.get(assetMarketKey(asset, st));
      candidates.push({
        venue: st.venue,
        market: st.market,
        quote: st.quote,
        contract: st.contract,
        usdPerQuote: quoteRate(st.quote, asset, this.rates, this.indexNow),
        lastPrice: st.lastPrice,
        lastTradeAt: st.lastTradeAt,
        windowNotional,
        meanIntervalMs: meanTradeIntervalMs(st.intervalTrades, this.params),
        crossed: bookAt !== undefined && Math.abs(bookAt - (s + 1) * 1000) <= this.params.crossedBookMaxAgeMs,
        disconnected: this.disconnected.has(assetMarketKey(asset, st)),
        inSecond: st.inSecond,
      });
    }
    return candidates;
  }

  /** Computes `asset` at `s`, writes its row where one is due, and publishes its index (or its loss). */
  private evaluateAsset(asset: string, s: number, previous: PublishedIndex | undefined): void {
    const markets = this.candidates(asset, s);
    const result = markets.length > 0 ? computeIndexSecond(s, markets, previous, this.params) : undefined;
    if (result) this.lastResult.set(asset, result);
    else this.lastResult.delete(asset);
    this.recheckAt.set(asset, this.nextStaleTurn(asset, s));
    if (result?.price === undefined) {
      this.published.delete(asset);
      this.refreshAt.delete(asset);
      if (previous || this.mustWrite(asset, s)) this.write(noPriceRow(asset, s, this.computedAt));
      return;
    }
    const row = tickRow(asset, s, result, this.computedAt);
    const content = tickContent(row);
    const unchangedSince = previous?.content === content && result.tradeCount === 0 && !this.mustWrite(asset, s) ? previous.writtenAt : undefined;
    const writtenAt = unchangedSince !== undefined && s < unchangedSince + this.refreshS ? unchangedSince : s;
    if (writtenAt === s) this.write(row);
    this.published.set(asset, {
      price: result.price,
      lastTradeAt: result.lastTradeAt!,
      outliers: new Set(result.markets.filter((m) => m.reason === 'outlier').map(marketKey)),
      content,
      writtenAt,
    });
    this.refreshAt.set(asset, writtenAt + this.refreshS);
  }
}
