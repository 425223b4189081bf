// A collector's part that finds the trades it missed and recovers them: the gaps of each market
// (ingest/tradeGaps.ts) fed by the live trades and the sockets' drops, a recovery from the venue's
// REST history (ingest/historyRecovery.ts), and a clock for markets that went quiet after a drop.
import type { TradeEvent } from '../infra/events.ts';
import type { Logger } from '../infra/log.ts';
import type { EmitPath } from './emitPath.ts';
import { HistoryRecovery, type GapReport, type HistoryRecoveryStats } from './historyRecovery.ts';
import { TradeGaps, type FoundGap } from './tradeGaps.ts';
import type { HistoryCursor, TradeMessage, VenueDescriptor, VenueIo } from './venue.ts';

export interface MissedTradesOptions {
  venue: Pick<VenueDescriptor, 'id' | 'history'>;
  restBase: string;
  io: Pick<VenueIo, 'getJson'>;
  emitPath: EmitPath;
  /** A gap opened (its missing numbers known) or ended: the collector publishes it. */
  onGap(report: GapReport): void;
  log: Logger;
  wait(ms: number): Promise<void>;
  stopped(): boolean;
  /** At a start: the last trade the store holds of each market (none: what was missed while down is not known). */
  lastStored?: ReadonlyMap<string, HistoryCursor>;
  /** A market with no trade this long after its stream came back has its gap closed at that time (default 10 s). */
  quietMs?: number;
  now?: () => number;
}

export class MissedTrades {
  readonly #gaps: TradeGaps;
  readonly #recovery: HistoryRecovery;
  readonly #now: () => number;
  readonly #quietMs: number;
  readonly #timer: NodeJS.Timeout;
  readonly #seqOf: ((tradeId: string) => number | undefined) | undefined;

  constructor(options: MissedTradesOptions) {
    const { venue, emitPath } = options;
    this.#now = options.now ?? Date.now;
    this.#quietMs = options.quietMs ?? 10_000;
    this.#gaps = new TradeGaps(venue.history?.continuity ?? 'time');
    this.#seqOf = venue.history?.seqOf;
    this.#recovery = new HistoryRecovery({
      venueId: venue.id,
      rule: venue.history,
      restBase: options.restBase,
      getJson: (url) => options.io.getJson(url),
      emit: (trades) => emitPath.emitRecovered(trades, this.#now()),
      report: (report) => {
        if (report.through) this.#gaps.recovered(report.gap.symbol, report.through);
        options.onGap(report);
      },
      log: options.log,
      wait: options.wait,
      stopped: options.stopped,
      now: this.#now,
    });
    if (options.lastStored) this.#gaps.started(options.lastStored, this.#now());
    this.#timer = setInterval(() => this.#closeQuiet(), Math.max(100, Math.floor(this.#quietMs / 4)));
    this.#timer.unref();
  }

  /** Gaps a previous run opened and did not end: recovered again (their ids kept), before the new ones. */
  resume(gaps: readonly FoundGap[]): void {
    for (const gap of gaps) this.#recovery.enqueue(gap);
  }

  /**
   * A live trade (the emit path's observer). False for one that came late for a gap closed at a
   * time whose recovery already handed it on: it is not published again.
   */
  onLiveTrade(trade: TradeMessage): boolean {
    const late = this.#gaps.closedAfter(trade);
    const gap = this.#gaps.observe(trade);
    if (gap) this.#recovery.enqueue(gap);
    return late ? this.#recovery.deliveredLive(trade) : true;
  }

  /** A socket subscribed these markets: each is watched from now if no trade of it is known. */
  watching(symbols: readonly string[]): void {
    this.#gaps.watching(symbols, this.#now());
  }

  /** A message of this market came on its socket: its stream is back (the quiet clock starts). */
  streaming(symbol: string): void {
    this.#gaps.streaming(symbol, this.#now());
  }

  /** The stream of these markets stopped (a socket dropped), or the bus refused their trades. */
  interrupted(symbols: readonly string[], cause: 'reconnect' | 'overload' = 'reconnect'): void {
    this.#gaps.interrupted(symbols, this.#now(), cause);
  }

  /** Trades the bus refused: each market's gap starts before its earliest one. */
  refused(trades: readonly Pick<TradeEvent, 'market' | 'ts' | 'tradeId'>[]): void {
    const seqOf = this.#seqOf;
    for (const t of trades) {
      const seq = seqOf?.(t.tradeId);
      this.#gaps.refused(t.market, { ts: t.ts, ...(seq === undefined ? {} : { seq }) }, this.#now());
      this.#recovery.refused(t.market);
    }
  }

  /** A delisted market is forgotten. */
  forget(symbol: string): void {
    this.#gaps.forget(symbol);
  }

  #closeQuiet(): void {
    for (const gap of this.#gaps.due(this.#now(), this.#quietMs)) this.#recovery.enqueue(gap);
  }

  stats(): HistoryRecoveryStats {
    return this.#recovery.stats();
  }

  /** Resolves once no recovery is queued or running. */
  idle(): Promise<void> {
    return this.#recovery.idle();
  }

  /** Stops the clock; a recovery under way ends at its next wait (the collector's `stopped`). */
  async close(): Promise<void> {
    clearInterval(this.#timer);
    await this.#recovery.idle();
  }
}
