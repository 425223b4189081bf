// The one path every trade and liquidation takes to the bus, from a native venue's parser or from
// ccxt: its followed market, a duplicate check, the conversion to an event (ingest/EVENTS.md), the
// event-time bounds, the counters, and one publish per frame or drain. What differs between
// collectors is only which duplicates can occur: the same message on two sockets while a rotation
// overlaps them (native), or a venue's recent trades replayed after a resubscription (ccxt).
import type { Bus } from '../infra/bus/bus.ts';
import type { MarketEvent } from '../infra/events.ts';
import type { Logger } from '../infra/log.ts';
import { eventTimeCheck, toLiquidationEvent, toTradeEvent } from './normalize.ts';
import type { VenueMarket, VenueMessage } from './venue.ts';

export type TradeMessage = Extract<VenueMessage, { kind: 'trade' }>;
export type LiquidationMessage = Extract<VenueMessage, { kind: 'liquidation' }>;

/** A trade or liquidation whose fields could not be read (ccxt hands over what the venue sent): refused, once it passed the duplicate check. */
export interface UnreadableReport {
  kind: 'unreadable';
  of: 'trade' | 'liquidation';
  symbol: string;
  id: string;
}

/** What a venue reported of one trade or liquidation; `symbol` is the venue's own market id. */
export type Reported = TradeMessage | LiquidationMessage | UnreadableReport;

export interface DuplicateFilter {
  /** False for a trade or liquidation already seen (as far as the filter remembers), which is then dropped silently. */
  first(kind: 'trade' | 'liquidation', symbol: string, id: string): boolean;
}

export const keepAll: DuplicateFilter = { first: () => true };

/** The collector's counters this path adds to; `unknownMessages` counts what it refuses. */
export interface EmitCounters {
  trades: number;
  liquidations: number;
  unknownMessages: number;
}

export interface EmitPathOptions {
  venueId: string;
  bus: Pick<Bus, 'publish'>;
  /** Logs the first event refused for its time (ingest/normalize.ts, eventTimeCheck). */
  log: Logger;
  /** The followed market of a venue symbol; reports of other markets are dropped. */
  market(symbol: string): VenueMarket | undefined;
  counters: EmitCounters;
  /**
   * Each live trade, in the venue's order (not those recovered from its history): where missed
   * trades are found. False: a recovery already handed this trade on, and it is not published.
   */
  onLiveTrade?(trade: TradeMessage): boolean;
}

export class EmitPath {
  readonly #options: EmitPathOptions;
  readonly #timely: ReturnType<typeof eventTimeCheck>;

  constructor(options: EmitPathOptions) {
    this.#options = options;
    this.#timely = eventTimeCheck(options.log);
  }

  /** One frame's (or one drain's) trades and liquidations, in order: those that pass are published together. */
  emit(reports: readonly Reported[], receivedAt: number, duplicates: DuplicateFilter = keepAll, recovered = false): void {
    const { venueId, counters, onLiveTrade } = this.#options;
    const events: MarketEvent[] = [];
    for (const r of reports) {
      const market = this.#options.market(r.symbol);
      if (!market) continue;
      const kind = r.kind === 'unreadable' ? r.of : r.kind;
      const id = r.kind === 'trade' ? r.tradeId : r.kind === 'liquidation' ? r.liquidationId : r.id;
      if (!duplicates.first(kind, r.symbol, id)) continue;
      const event = r.kind === 'trade' ? toTradeEvent(venueId, market, r, receivedAt) : r.kind === 'liquidation' ? toLiquidationEvent(venueId, market, r, receivedAt) : undefined;
      // A recovered trade is as old as its gap, whose bounds the recovery checked: only live ones are held to their receipt time.
      if (!event || (!recovered && !this.#timely(event))) {
        counters.unknownMessages += 1;
        continue;
      }
      if (event.type === 'trade') {
        // Each market's live trades pass here in the venue's order: what finds the trades missed.
        if (!recovered && onLiveTrade?.(r as TradeMessage) === false) continue;
        counters.trades += 1;
      } else counters.liquidations += 1;
      events.push(event);
    }
    if (events.length > 0) this.#options.bus.publish(events);
  }

  /** Trades recovered from the venue's history: the same path, received now, without the live trades' observer. */
  emitRecovered(trades: readonly TradeMessage[], receivedAt: number): void {
    this.emit(trades, receivedAt, keepAll, true);
  }
}

/**
 * Native collectors: while a socket and its replacement overlap (a rotation), the same trade can
 * come on both; a frame from an overlapping socket passes each trade and liquidation once. The keys
 * are forgotten once no socket overlaps.
 */
export class RotationDuplicates {
  readonly #seen = new Set<string>();
  readonly #filter: DuplicateFilter = {
    first: (kind, symbol, id) => {
      const key = `${kind === 'trade' ? 't' : 'l'}\u0000${symbol}\u0000${id}`;
      if (this.#seen.has(key)) return false;
      this.#seen.add(key);
      return true;
    },
  };

  /** The filter for a frame of a socket that overlaps (or not) its replacement. */
  during(overlapping: boolean): DuplicateFilter {
    return overlapping ? this.#filter : keepAll;
  }

  /** After a frame: once nothing overlaps, nothing can come twice any more. `overlapping` is asked only while keys are kept. */
  settle(overlapping: () => boolean): void {
    if (this.#seen.size > 0 && !overlapping()) this.#seen.clear();
  }

  /** Keys remembered now. */
  get size(): number {
    return this.#seen.size;
  }
}

/** Bounded memory of recent ids per market: a resubscription that replays trades publishes nothing twice. */
export class RecentIds {
  readonly #byMarket = new Map<string, Set<string>>();
  readonly #limit: number;
  constructor(limit: number) {
    this.#limit = limit;
  }
  /** True the first time `id` is seen for `market` (among the last `limit`). */
  add(market: string, id: string): boolean {
    let ids = this.#byMarket.get(market);
    if (!ids) this.#byMarket.set(market, (ids = new Set()));
    if (ids.has(id)) return false;
    ids.add(id);
    if (ids.size > this.#limit) ids.delete(ids.values().next().value!);
    return true;
  }
}

/** ccxt collectors: a venue's recent trades and liquidations, replayed after a resubscription, pass once. */
export class ReplayDuplicates implements DuplicateFilter {
  // Replays are a venue's recent trades (tens, at most ccxt's 1,000-item cache).
  readonly #trades = new RecentIds(1_000);
  readonly #liquidations = new RecentIds(200);

  first(kind: 'trade' | 'liquidation', symbol: string, id: string): boolean {
    return (kind === 'trade' ? this.#trades : this.#liquidations).add(symbol, id);
  }
}
