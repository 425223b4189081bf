// What a collector knows of each market's trades, to find those it missed: the last trade it saw
// (or the last the store holds, at a start), and whether the market's stream was interrupted since.
// A gap is the span between the last trade before and the first after: a skipped number where the
// venue numbers its trades, else a socket down, a restart or trades the bus refused. Pure: the
// collector feeds it and runs the recovery it asks for (ingest/historyRecovery.ts).
import type { HistoryCursor, TradeHistoryRule, TradeMessage } from './venue.ts';

/** What made a gap: a skipped trade number, a socket that dropped, a restart, trades the bus refused. */
export type GapCause = 'sequence' | 'reconnect' | 'restart' | 'overload';

/** A span of a market's trades to recover: after `after` (excluded), up to `until` (excluded where it is a live trade). */
export interface FoundGap {
  symbol: string;
  cause: GapCause;
  /** The last trade known before the gap. */
  after: HistoryCursor;
  /** The first trade after it (a live one), or the time up to which to recover when none came. */
  until: HistoryCursor;
  /** Sequential venues: the numbers missing, first to last (both included); undefined where unknown. */
  missing?: { first: number; last: number };
  /** A gap a previous run opened (read back from the store): its id, kept... */
  gapId?: string;
  /** ...and the highest version it has there: this run's states come after it. */
  versionBase?: number;
}

interface MarketTrades {
  last?: HistoryCursor;
  /**
   * Set while the stream was interrupted (or since a start) and no trade has come since; `backAt`
   * once a socket carries the market again: its first message on a socket subscribed to it, not the
   * socket's opening (subscriptions can take seconds to be answered, a restart's most of all).
   */
  awaiting?: { cause: GapCause; since: number; backAt?: number; subscribedAt?: number };
  /**
   * Set when a gap was closed at a time for want of a live trade (see due): the first live trade
   * after it opens one more gap, from that time, in case the stream was back in name only.
   */
  closedQuiet?: GapCause;
  /**
   * Set by a refused trade until a gap is found from it: the number before the earliest trade the
   * bus refused. A recovery that ends later (its trades may be the refused ones) does not count on
   * past it (see recovered).
   */
  refusedAfterSeq?: number;
}

/**
 * A subscription nothing came on for this long is taken as answered from then: some venues send
 * nothing for a market that neither trades nor moves its book (or answer in messages that name no
 * market), and its gap must still close and be recovered. Longer than a slow venue takes to answer
 * a restart's subscriptions, seen at 10 to 15 s.
 */
export const unansweredSubscriptionMs = 30_000;

/** The cursor of a trade: its time, number (the last of its fills) and id. */
export function cursorOf(trade: Pick<TradeMessage, 'ts' | 'seq' | 'tradeId'>): HistoryCursor {
  return { ts: trade.ts, tradeId: trade.tradeId, ...(trade.seq === undefined ? {} : { seq: trade.seq }) };
}

/** The first number a trade message covers (its fills end at `seq`). */
const firstSeqOf = (trade: Pick<TradeMessage, 'seq' | 'fills'>) => trade.seq! - (trade.fills ?? 1) + 1;

export class TradeGaps {
  readonly #continuity: TradeHistoryRule['continuity'];
  readonly #markets = new Map<string, MarketTrades>();
  /** After a start: where a market of which the store holds no trade is recovered from (see started). */
  #unstoredFrom?: number;

  constructor(continuity: TradeHistoryRule['continuity']) {
    this.#continuity = continuity;
  }

  #of(symbol: string): MarketTrades {
    let market = this.#markets.get(symbol);
    if (!market) this.#markets.set(symbol, (market = {}));
    return market;
  }

  /** The last trade known of a market. */
  last(symbol: string): HistoryCursor | undefined {
    return this.#markets.get(symbol)?.last;
  }

  /**
   * At a start: the last trade the store holds of each market; the first live trade closes the gap.
   * A market of which the store holds none, on a venue it holds trades of, may have lost all its
   * trades in the run before (a process killed before its first insert): it is recovered from the
   * earliest of the venue's last stored trades, when the run before still collected the venue.
   */
  started(lastStored: ReadonlyMap<string, HistoryCursor>, at: number): void {
    for (const [symbol, last] of lastStored) {
      const market = this.#of(symbol);
      market.last = last;
      market.awaiting = { cause: 'restart', since: at };
      this.#unstoredFrom = Math.min(this.#unstoredFrom ?? Infinity, last.ts);
    }
  }

  /**
   * These markets' stream started at `at` (a socket subscribed them): a market with no trade known
   * yet is watched from then, so a drop before its first trade still has a start to recover from.
   */
  watching(symbols: readonly string[], at: number): void {
    for (const symbol of symbols) {
      const market = this.#of(symbol);
      if (!market.last && this.#unstoredFrom !== undefined) {
        market.last = { ts: this.#unstoredFrom };
        market.awaiting = { cause: 'restart', since: at };
      }
      market.last ??= { ts: at };
      // Subscribed, not yet carried: the quiet clock starts at its first message (see streaming).
      if (market.awaiting) {
        market.awaiting.subscribedAt = at;
        market.awaiting.backAt = undefined;
      }
    }
  }

  /**
   * A message of this market came on a socket subscribed to it (a book change, any message): its
   * stream is back, and a market quiet from now on has its gap closed after `quietMs` (see due).
   */
  streaming(symbol: string, at: number): void {
    const awaiting = this.#markets.get(symbol)?.awaiting;
    if (awaiting?.subscribedAt !== undefined && awaiting.backAt === undefined) awaiting.backAt = at;
  }

  /** The stream of these markets stopped (a socket dropped) at `at`, or the bus refused their trades. */
  interrupted(symbols: readonly string[], at: number, cause: 'reconnect' | 'overload' = 'reconnect'): void {
    for (const symbol of symbols) {
      const market = this.#markets.get(symbol);
      // A market with no trade known yet has nothing to recover from.
      if (market?.last && !market.awaiting) market.awaiting = { cause, since: at, ...(cause === 'overload' ? { backAt: at } : {}) };
    }
  }

  /**
   * The bus refused this trade (published, then lost): what the market missed starts just before
   * it, even where later trades got through; the next live trade closes the gap.
   */
  refused(symbol: string, trade: Pick<TradeMessage, 'ts' | 'seq'>, at: number): void {
    const market = this.#of(symbol);
    const before: HistoryCursor = { ts: trade.ts - 1, ...(trade.seq === undefined ? {} : { seq: trade.seq - 1 }) };
    const earlier = !market.last || (before.seq !== undefined && market.last.seq !== undefined ? before.seq < market.last.seq : before.ts < market.last.ts);
    if (earlier) market.last = before;
    if (before.seq !== undefined && (market.refusedAfterSeq === undefined || before.seq < market.refusedAfterSeq)) market.refusedAfterSeq = before.seq;
    // The stream itself never stopped: a market quiet from now on has its gap closed after `quietMs`.
    market.awaiting ??= { cause: 'overload', since: at, backAt: at };
  }

  /**
   * A live trade, in the venue's order. Returns the gap it closes: the trades between the last one
   * known and it, when the stream was interrupted, or when its number skips (sequential venues).
   */
  observe(trade: Pick<TradeMessage, 'symbol' | 'ts' | 'seq' | 'fills' | 'tradeId'>): FoundGap | undefined {
    const market = this.#of(trade.symbol);
    const { last, awaiting, closedQuiet } = market;
    const sequential = this.#continuity === 'sequential' && trade.seq !== undefined;
    // An older trade (a rotation's overlap, a venue's replay) moves nothing. The time a market was
    // watched from is no trade: its first live trade replaces it however old (a venue sends, after a
    // subscription, trades printed just before it), or a later gap from that time would take it again.
    const watchedFrom = last !== undefined && last.tradeId === undefined && last.seq === undefined && !awaiting && !closedQuiet;
    if (last && !watchedFrom && (sequential && last.seq !== undefined ? trade.seq! <= last.seq : trade.ts < last.ts)) return undefined;
    market.last = cursorOf(trade);
    market.awaiting = undefined;
    market.closedQuiet = undefined;
    // The gap found now (if any) starts at or before the refused trades: its recovery gets them.
    market.refusedAfterSeq = undefined;
    if (!last) return undefined;
    if (sequential && last.seq !== undefined) {
      const first = firstSeqOf(trade);
      if (first <= last.seq + 1) return undefined;
      return { symbol: trade.symbol, cause: awaiting?.cause ?? closedQuiet ?? 'sequence', after: last, until: market.last, missing: { first: last.seq + 1, last: first - 1 } };
    }
    const cause = awaiting?.cause ?? closedQuiet;
    if (!cause) return undefined;
    return { symbol: trade.symbol, cause, after: last, until: market.last };
  }

  /**
   * Whether a live trade falls in the gap its market was last closed at a time for (see due):
   * printed before that time, delivered after it (by the venue's delay or ours). That gap's
   * recovery takes it too (HistoryRecovery.deliveredLive decides which one is published).
   */
  closedAfter(trade: Pick<TradeMessage, 'symbol' | 'ts'>): boolean {
    const market = this.#markets.get(trade.symbol);
    return market?.closedQuiet !== undefined && market.last !== undefined && market.last.tradeId === undefined && trade.ts <= market.last.ts;
  }

  /**
   * Markets whose stream has been back for `quietMs` or more with no trade since: a quiet market's
   * gap ends at `now` (what it missed is recovered up to then), and its first live trade opens one
   * more from `now` (see MarketTrades.closedQuiet). A market whose stream is still down waits: what
   * it misses meanwhile is its gap too.
   */
  due(now: number, quietMs: number): FoundGap[] {
    const gaps: FoundGap[] = [];
    for (const [symbol, market] of this.#markets) {
      const awaiting = market.awaiting;
      const backAt = awaiting?.backAt ?? (awaiting?.subscribedAt === undefined ? undefined : awaiting.subscribedAt + unansweredSubscriptionMs);
      if (!awaiting || !market.last || backAt === undefined || now - backAt < quietMs) continue;
      gaps.push({ symbol, cause: awaiting.cause, after: market.last, until: { ts: now } });
      // The recovery covers what came before now; the live stream should carry what follows. A
      // subscription can be answered before trades flow again (seen on a venue just back from an
      // outage): what lies between now and the first live trade is one more gap. A numbered venue
      // keeps the number, so that gap is found by number (recovered moves it past what this one gets).
      market.closedQuiet = awaiting.cause;
      market.awaiting = undefined;
      market.refusedAfterSeq = undefined;
      const seq = this.#continuity === 'sequential' ? market.last.seq : undefined;
      market.last = { ts: now, ...(seq === undefined ? {} : { seq }) };
    }
    return gaps;
  }

  /**
   * A gap's recovery handed over trades up to `through`: on a numbered venue, a market whose last
   * known number is lower (no live trade since a quiet close) counts on from it, so the gap its
   * next live trade finds holds only what the recovery did not get. Not past a trade the bus refused
   * since (a recovered one, maybe): that trade is still missing.
   */
  recovered(symbol: string, through: HistoryCursor): void {
    const market = this.#markets.get(symbol);
    if (this.#continuity !== 'sequential' || !market?.last || through.seq === undefined) return;
    const upTo = Math.min(through.seq, market.refusedAfterSeq ?? Infinity);
    if (market.last.seq === undefined || market.last.seq < upTo) market.last = { ...market.last, seq: upTo };
  }

  /** A delisted market is forgotten. */
  forget(symbol: string): void {
    this.#markets.delete(symbol);
  }
}
