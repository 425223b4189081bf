// Recovers the trades a collector missed from the venue's REST trade history (the venue file's
// `history.rest`), one gap at a time, at the venue's pace: pages from the last trade known before
// the gap up to the first after it, hands what it finds to the emit path (the bus, the sink's
// dedupe: an overlap adds nothing), and says how each gap ended, with the reason for what it could
// not get. Live collection never waits for it: it runs beside the sockets, its requests paced.
import type { Logger } from '../infra/log.ts';
import { cursorOf, type FoundGap } from './tradeGaps.ts';
import type { HistoryCursor, HistoryPage, TradeHistoryRule, TradeMessage } from './venue.ts';

export type GapState = 'open' | 'recovered' | 'partly_recovered' | 'unrecoverable';
/**
 * Why trades of a gap are not recovered: older than the venue's REST history reaches (or past the
 * latest trades it serves), numbers the venue's history does not have (trades that never were: the
 * gap is recovered), the venue refusing or failing our requests, or no REST history at all.
 */
export type GapReason = 'beyond_rest_reach' | 'ids_never_traded' | 'venue_refused' | 'no_rest_history';

export interface GapReport {
  gapId: string;
  gap: FoundGap;
  state: GapState;
  reason?: GapReason;
  /** Trades the venue's history gave for the gap (handed to the bus; the sink drops those it holds). */
  recovered: number;
  /** The last of them, at the gap's end. */
  through?: HistoryCursor;
  /** Sequential venues: numbers missing, and how many of them the venue's history does not have. */
  missing?: number;
  absent?: number;
}

export interface HistoryRecoveryOptions {
  venueId: string;
  rule: TradeHistoryRule | undefined;
  restBase: string;
  getJson(url: string): Promise<unknown>;
  /** Hands recovered trades of one market, oldest first, to the emit path. */
  emit(trades: readonly TradeMessage[]): void;
  /** A gap opened (its missing numbers known) or ended. */
  report(report: GapReport): void;
  log: Logger;
  /** Sleeps, ending early when the collector stops. */
  wait(ms: number): Promise<void>;
  stopped(): boolean;
  now?: () => number;
  /** Attempts per page before the venue counts as refusing (default 5); waits double from `retryMs` (default 1 s). */
  attempts?: number;
  retryMs?: number;
}

export interface HistoryRecoveryStats {
  /** Gaps waiting or being recovered. */
  pending: number;
  requests: number;
  /** Requests the venue refused or failed (each retried). */
  failedRequests: number;
  recoveredTrades: number;
  /** Gaps ended, by state. */
  gaps: Record<Exclude<GapState, 'open'>, number>;
}

/** What a job learned while paging. */
interface Paging {
  trades: TradeMessage[];
  /** A page reached the first trade after the gap (or the venue had nothing after). */
  reached: boolean;
  refused: boolean;
  /** The venue's history did not reach back to the gap's start (reach, or only its latest trades). */
  shortOfStart: boolean;
  /** The latest trade paged, kept or not. */
  furthest?: TradeMessage;
}

/**
 * What the bus has of the end of a gap closed at a time: `from` is its end's second (as coarse as
 * the history's times); `ids` the trades it handed on from `lateWithinMs` before that on, and the
 * live trades that came late for it (see deliveredLive).
 */
interface Seam {
  from: number;
  ids: Set<string>;
}

/**
 * How long before the time a gap was closed at a live trade may still come late for it (printed
 * before that time, delivered after): a recovery remembers the ids it handed on from then on, so
 * that such a trade is published once.
 */
export const lateWithinMs = 60_000;

/** Queued gaps of one market closer than this are recovered in one pass (see takeNear). */
export const togetherWithinMs = 120_000;

export class HistoryRecovery {
  readonly #options: HistoryRecoveryOptions;
  readonly #now: () => number;
  /** How trades are ordered and placed against a gap's bounds: the venue's rule, the same for every gap. */
  readonly #place: ReturnType<typeof placement>;
  readonly #queue: (FoundGap & { gapId: string })[] = [];
  /**
   * Per market, the ids recovered in the last second of a gap closed at a time (TradeGaps.due): the
   * market's next gap starts from that time with no id, so it takes that whole second again (the
   * history's times may be coarse), and must not hand those trades on twice.
   */
  readonly #seams = new Map<string, Seam>();
  /** Per market, live trades that came late for a gap closed at a time (see deliveredLive): no recovery hands them on. */
  readonly #lateLive = new Map<string, Set<string>>();
  /** Per market, the ids the gap being paged has handed on so far. */
  readonly #handing = new Map<string, Set<string>>();
  #running: Promise<void> | undefined;
  #lastRequestAt = -Infinity;
  readonly #stats: HistoryRecoveryStats = { pending: 0, requests: 0, failedRequests: 0, recoveredTrades: 0, gaps: { recovered: 0, partly_recovered: 0, unrecoverable: 0 } };

  constructor(options: HistoryRecoveryOptions) {
    this.#options = options;
    this.#now = options.now ?? Date.now;
    this.#place = placement(options.rule?.idsRise === true, options.rule?.rest?.timeResolutionMs ?? 1);
  }

  stats(): HistoryRecoveryStats {
    return { ...this.#stats, pending: this.#queue.length + (this.#running ? 1 : 0), gaps: { ...this.#stats.gaps } };
  }

  /**
   * Queues a gap, and puts it on record at once (a process that dies before its turn leaves it open
   * in the store, and the next run recovers it); recovery runs one gap at a time.
   */
  enqueue(gap: FoundGap): void {
    const queued = { ...gap, gapId: gap.gapId ?? `${gap.cause}:${gap.after.seq ?? gap.after.ts}:${this.#now()}` };
    if (this.#options.rule?.rest) this.#options.report({ gapId: queued.gapId, gap: queued, state: 'open', recovered: 0, ...(gap.missing ? { missing: missingCount(gap.missing) } : {}) });
    this.#queue.push(queued);
    this.#running ??= this.#drain().finally(() => (this.#running = undefined));
  }

  /**
   * Trades of this market were refused by the bus: those a gap handed on may be among them, and the
   * gap found from the refusal must hand them on again (see #notHandedAtSeam).
   */
  refused(symbol: string): void {
    this.#seams.delete(symbol);
    this.#lateLive.delete(symbol);
    this.#handing.delete(symbol);
  }

  /**
   * A live trade printed before the time its market's gap was closed at, and delivered after it
   * (TradeGaps.closedAfter): that gap's recovery takes it too. False where a recovery has already
   * handed it on (the live one is then not published again); else no recovery hands it on from now.
   */
  deliveredLive(trade: Pick<TradeMessage, 'symbol' | 'tradeId'>): boolean {
    // Nothing is recovered without a REST history: nothing to keep it from.
    if (!this.#options.rule?.rest) return true;
    const { symbol, tradeId } = trade;
    if (this.#handing.get(symbol)?.has(tradeId) || this.#seams.get(symbol)?.ids.has(tradeId)) return false;
    let late = this.#lateLive.get(symbol);
    if (!late) this.#lateLive.set(symbol, (late = new Set()));
    late.add(tradeId);
    return true;
  }

  /** Resolves once every queued gap has ended (or the collector stopped). */
  async idle(): Promise<void> {
    while (this.#running) await this.#running;
  }

  async #drain(): Promise<void> {
    while (this.#queue.length > 0 && !this.#options.stopped()) {
      const gap = this.#queue.shift()!;
      const near = this.#takeNear(gap);
      try {
        await (near.length === 0 ? this.#recover(gap) : this.#recoverTogether([gap, ...near]));
      } catch (err) {
        this.#options.log.error({ err, symbol: gap.symbol }, 'trade recovery failed');
      }
    }
  }

  /**
   * The queued gaps of the same market that lie near this one (each starting within
   * `togetherWithinMs` of the span so far ends): taken out of the queue, to be paged in one pass.
   * A restart after a burst leaves several gaps per market minutes apart at most; one pass over
   * them costs a venue paced at one request in 5 s (Bitfinex) a request per market, not per gap.
   * Not for venues that serve only their latest trades or a bounded reach: each gap's start decides there.
   */
  #takeNear(gap: FoundGap): (FoundGap & { gapId: string })[] {
    const rest = this.#options.rule?.rest;
    if (!rest || rest.latestOnly !== undefined || rest.reachMs !== undefined) return [];
    const near: (FoundGap & { gapId: string })[] = [];
    let from = gap.after.ts;
    let to = gap.until.ts;
    for (let grew = true; grew; ) {
      grew = false;
      for (let i = 0; i < this.#queue.length; i++) {
        const other = this.#queue[i]!;
        if (other.symbol !== gap.symbol || other.after.ts > to + togetherWithinMs || other.until.ts < from - togetherWithinMs) continue;
        near.push(other);
        this.#queue.splice(i--, 1);
        from = Math.min(from, other.after.ts);
        to = Math.max(to, other.until.ts);
        grew = true;
      }
    }
    return near;
  }

  /** Several gaps of one market in one pass: paged from the earliest start to the latest end, each ended with what falls in it. */
  async #recoverTogether(gaps: (FoundGap & { gapId: string })[]): Promise<void> {
    const rest = this.#options.rule!.rest!;
    const place = this.#place;
    // Bounds in one millisecond: the lower number starts earlier, the higher ends later, and one without
    // a number takes the whole millisecond (gaps come in any order: a restart reads them unordered).
    const first = gaps.reduce((a, b) => (b.after.ts < a.after.ts || (b.after.ts === a.after.ts && (b.after.seq ?? -Infinity) < (a.after.seq ?? -Infinity)) ? b : a));
    const last = gaps.reduce((a, b) => (b.until.ts > a.until.ts || (b.until.ts === a.until.ts && (b.until.seq ?? Infinity) > (a.until.seq ?? Infinity)) ? b : a));
    const numbered = gaps.every((g) => g.missing);
    const span: FoundGap = {
      symbol: first.symbol,
      cause: first.cause,
      after: first.after,
      until: last.until,
      ...(numbered ? { missing: { first: Math.min(...gaps.map((g) => g.missing!.first)), last: Math.max(...gaps.map((g) => g.missing!.last)) } } : {}),
    };
    // Trades between the gaps were stored live: only those inside one are handed on.
    const notYet = this.#notHandedAtSeam(first);
    const inside = (t: TradeMessage) => notYet(t) && gaps.some((g) => place.isAfter(t, g.after) && place.isWithin(t, g));
    const paging = await this.#page(span, rest, inside);
    this.#keepSeam(last, paging.trades);
    for (const gap of gaps) {
      const own = paging.trades.filter((t) => place.isAfter(t, gap.after) && place.isWithin(t, gap));
      const reached = paging.reached || (paging.furthest !== undefined && place.reachesEnd(paging.furthest, gap));
      this.#endPaged(gap, { trades: own, reached, refused: paging.refused && !reached, shortOfStart: false });
    }
  }

  async #recover(gap: FoundGap & { gapId: string }): Promise<void> {
    const rest = this.#options.rule?.rest;
    if (!rest) {
      const missing = gap.missing ? missingCount(gap.missing) : undefined;
      this.#end({ gapId: gap.gapId, gap, state: 'unrecoverable', reason: 'no_rest_history', recovered: 0, ...(missing === undefined ? {} : { missing, absent: missing }) });
      return;
    }
    // Ended, even where nothing was missing (a reconnect that missed nothing: recovered, 0 trades).
    const paging = await this.#page(gap, rest, this.#notHandedAtSeam(gap));
    this.#keepSeam(gap, paging.trades);
    this.#endPaged(gap, paging);
  }

  /**
   * Which trades a gap may hand on: where it starts from the time the market's last gap was closed
   * at, not those that gap handed on from that second.
   */
  #notHandedAtSeam(gap: FoundGap): (trade: TradeMessage) => boolean {
    const seam = this.#seams.get(gap.symbol);
    const fromTime = gap.after.tradeId === undefined && gap.after.seq === undefined;
    if (!seam || !fromTime || this.#place.coarse(gap.after.ts) !== seam.from) return () => true;
    return (trade) => !seam.ids.has(trade.tradeId);
  }

  /**
   * After a gap's pages: where it was closed at a time, the ids the bus has of its end (see Seam).
   * The live trades that came late for it are forgotten once no gap of the market is queued.
   */
  #keepSeam(gap: FoundGap, handed: readonly TradeMessage[]): void {
    const { symbol } = gap;
    this.#seams.delete(symbol);
    this.#handing.delete(symbol);
    const late = this.#lateLive.get(symbol);
    if (!this.#queue.some((queued) => queued.symbol === symbol)) this.#lateLive.delete(symbol);
    if (gap.until.tradeId !== undefined || gap.until.seq !== undefined) return;
    const from = this.#place.coarse(gap.until.ts);
    // Those of its last minute only: a long gap hands on many.
    const ids = new Set(handed.filter((t) => t.ts >= from - lateWithinMs).map((t) => t.tradeId));
    for (const id of late ?? []) ids.add(id);
    this.#seams.set(symbol, { from, ids });
  }

  /** Ends a gap with what its pages gave: its state, and the last trade recovered. */
  #endPaged(gap: FoundGap & { gapId: string }, paging: Paging): void {
    const last = paging.trades.at(-1);
    this.#end({ ...this.#outcome(gap.gapId, gap, paging), ...(last ? { through: cursorOf(last) } : {}) });
  }

  #end(report: GapReport): void {
    if (report.state !== 'open') this.#stats.gaps[report.state] += 1;
    this.#options.report(report);
  }

  /** Pages the venue's history from the gap's start until it reaches the gap's end; keeps (and emits) the trades `keep` accepts, all by default. */
  async #page(gap: FoundGap, rest: NonNullable<TradeHistoryRule['rest']>, keep: (trade: TradeMessage) => boolean = () => true): Promise<Paging> {
    const paging: Paging = { trades: [], reached: false, refused: false, shortOfStart: false };
    const place = this.#place;
    if (rest.reachMs !== undefined && this.#now() - gap.after.ts > rest.reachMs) paging.shortOfStart = true;
    let cursor: HistoryCursor = gap.after;
    const handing = new Set<string>();
    this.#handing.set(gap.symbol, handing);
    // Asked at every page: a live trade may come late for the gap while it is paged.
    const notLateLive = (trade: TradeMessage) => !this.#lateLive.get(gap.symbol)?.has(trade.tradeId);
    while (!this.#options.stopped()) {
      const page = await this.#fetch(rest, gap.symbol, cursor);
      if (!page) {
        paging.refused = true;
        break;
      }
      const sorted = [...page.trades].sort(place.order);
      // A venue that serves only its latest trades, whose full page does not go back to the gap's start.
      const oldest = sorted[0];
      if (rest.latestOnly !== undefined && sorted.length >= rest.latestOnly && oldest && place.isAfter(oldest, gap.after)) paging.shortOfStart = true;
      const inGap = sorted.filter((t) => place.isAfter(t, cursor) && place.isWithin(t, gap));
      const wanted = inGap.filter((t) => keep(t) && notLateLive(t));
      if (wanted.length > 0) {
        for (const t of wanted) handing.add(t.tradeId);
        this.#options.emit(wanted);
        // Counted as published, page by page: a long recovery shows its progress.
        this.#stats.recoveredTrades += wanted.length;
        paging.trades.push(...wanted);
      }
      paging.furthest = sorted.at(-1) ?? paging.furthest;
      paging.reached = sorted.some((t) => place.reachesEnd(t, gap)) || !page.more;
      if (paging.reached || inGap.length === 0 || rest.latestOnly !== undefined) break;
      cursor = cursorOf(inGap.at(-1)!);
    }
    return paging;
  }

  /** One page, at the venue's pace, retried with backoff; undefined when the venue keeps refusing. */
  async #fetch(rest: NonNullable<TradeHistoryRule['rest']>, symbol: string, cursor: HistoryCursor): Promise<HistoryPage | undefined> {
    const { attempts = 5, retryMs = 1_000 } = this.#options;
    const url = rest.url(this.#options.restBase, symbol, cursor);
    for (let attempt = 0; attempt < attempts && !this.#options.stopped(); attempt++) {
      const pause = this.#lastRequestAt + 1_000 / rest.requestsPerSecond - this.#now();
      if (pause > 0) await this.#options.wait(pause);
      this.#lastRequestAt = this.#now();
      this.#stats.requests += 1;
      try {
        const json = await this.#options.getJson(url);
        const page = rest.parse(json, symbol);
        if (page) return page;
        // Often a refusal in the venue's words (Kraken answers 200 with "EGeneral:Too many requests").
        this.#options.log.warn({ symbol, url, sample: JSON.stringify(json)?.slice(0, 200) }, 'trade history page not understood');
      } catch (err) {
        this.#options.log.warn({ symbol, err: (err as Error).message }, 'trade history request failed');
      }
      this.#stats.failedRequests += 1;
      await this.#options.wait(retryMs * 2 ** attempt);
    }
    return undefined;
  }

  /** How a gap ended, from what its pages gave. */
  #outcome(gapId: string, gap: FoundGap, paging: Paging): GapReport {
    const recovered = paging.trades.length;
    if (gap.missing) {
      const missing = missingCount(gap.missing);
      const got = new Set<number>();
      for (const t of paging.trades) for (let s = t.seq! - (t.fills ?? 1) + 1; s <= t.seq!; s++) if (s >= gap.missing.first && s <= gap.missing.last) got.add(s);
      const absent = missing - got.size;
      const base = { gapId, gap, recovered, missing, absent };
      if (absent === 0) return { ...base, state: 'recovered' };
      // Within the history's reach, pages went past them with later trades but not these: they never were trades.
      const pastThem = paging.reached && !paging.refused && !paging.shortOfStart;
      if (pastThem) return { ...base, state: 'recovered', reason: 'ids_never_traded' };
      const reason: GapReason = paging.refused ? 'venue_refused' : 'beyond_rest_reach';
      return { ...base, state: got.size > 0 ? 'partly_recovered' : 'unrecoverable', reason };
    }
    const complete = paging.reached && !paging.refused && !paging.shortOfStart;
    if (complete) return { gapId, gap, state: 'recovered', recovered };
    const reason: GapReason = paging.refused ? 'venue_refused' : 'beyond_rest_reach';
    return { gapId, gap, state: recovered > 0 ? 'partly_recovered' : 'unrecoverable', reason, recovered };
  }
}

/** How many trade numbers a numbered gap misses. */
const missingCount = (missing: NonNullable<FoundGap['missing']>) => missing.last - missing.first + 1;

/** An integer trade id, or undefined. */
function idNumber(id: string | undefined): bigint | undefined {
  return id !== undefined && /^\d+$/.test(id) ? BigInt(id) : undefined;
}

/**
 * Where a trade falls against a gap's bounds: by number where the trade and the bound have one,
 * else by id where ids rise with time (`idsRise`) and both are integers, else by time (a trade at
 * the bound's time, as coarse as the history's times, but with another id counts as after it:
 * the sink drops what it holds).
 */
function placement(idsRise: boolean, timeResolutionMs: number) {
  /** A bound's time as the history writes times: a trade of the bound's own second may show an earlier time. */
  const coarse = (ts: number) => Math.floor(ts / timeResolutionMs) * timeResolutionMs;
  const byId = (trade: TradeMessage, bound: HistoryCursor) => {
    if (!idsRise) return undefined;
    const a = idNumber(trade.tradeId);
    const b = idNumber(bound.tradeId);
    return a === undefined || b === undefined ? undefined : a < b ? -1 : a > b ? 1 : 0;
  };
  return {
    coarse,
    order(a: TradeMessage, b: TradeMessage): number {
      if (a.seq !== undefined && b.seq !== undefined) return a.seq - b.seq;
      const ia = idsRise ? idNumber(a.tradeId) : undefined;
      const ib = idsRise ? idNumber(b.tradeId) : undefined;
      if (ia !== undefined && ib !== undefined) return ia < ib ? -1 : ia > ib ? 1 : 0;
      return a.ts - b.ts;
    },
    /** After the cursor. */
    isAfter(trade: TradeMessage, cursor: HistoryCursor): boolean {
      if (trade.seq !== undefined && cursor.seq !== undefined) return trade.seq > cursor.seq;
      const cmp = byId(trade, cursor);
      if (cmp !== undefined) return cmp > 0;
      const from = coarse(cursor.ts);
      return trade.ts > from || (trade.ts === from && trade.tradeId !== cursor.tradeId);
    },
    /** Inside the gap: before its end (the first live trade after it, or the time it was closed at). */
    isWithin(trade: TradeMessage, gap: FoundGap): boolean {
      if (gap.missing && trade.seq !== undefined) return trade.seq - (trade.fills ?? 1) + 1 <= gap.missing.last;
      // From a time (no numbered trade before it) up to a numbered live trade: by number, as the
      // trades printed in that trade's millisecond after it came live too.
      if (trade.seq !== undefined && gap.until.seq !== undefined) return trade.seq < gap.until.seq;
      const cmp = byId(trade, gap.until);
      if (cmp !== undefined) return cmp < 0;
      if (gap.until.tradeId !== undefined && trade.tradeId === gap.until.tradeId) return false;
      return trade.ts <= gap.until.ts;
    },
    /** At or past the gap's end: paging can stop. */
    reachesEnd(trade: TradeMessage, gap: FoundGap): boolean {
      if (gap.missing && trade.seq !== undefined) return trade.seq >= gap.missing.last;
      if (trade.seq !== undefined && gap.until.seq !== undefined) return trade.seq >= gap.until.seq;
      const cmp = byId(trade, gap.until);
      if (cmp !== undefined) return cmp >= 0;
      return trade.ts >= gap.until.ts;
    },
  };
}
