// The books of a ccxt collector: ccxt keeps them (exchange.orderbooks); this part knows which are
// in sync (those ccxt last settled a watcher with), turns a failed sequence or checksum into one
// counted resync per market, redials when ccxt keeps a broken subscription, and publishes the books
// in sync as events.
import type { Exchange, OrderBook as CcxtOrderBook } from 'ccxt';
import type { BookEvent } from '../infra/events.ts';
import type { Logger } from '../infra/log.ts';
import { decimalText } from './ccxtReports.ts';
import { decimalProduct } from './decimal.ts';
import { toBookEvent } from './normalize.ts';
import type { Level } from './orderBook.ts';
import type { VenueMarket } from './venue.ts';

export interface CcxtBooksOptions {
  venueId: string;
  exchange: Exchange;
  /** The followed markets, by the unified symbol ccxt knows them by. */
  byUnified: ReadonlyMap<string, VenueMarket>;
  log: Logger;
  /** How long a book may stay out after its resync began before the collector redials (doubling each time, up to `maxGraceMs`). */
  resyncGraceMs: number;
  maxGraceMs: number;
  /** Sleeps, ending early when the collector stops. */
  wait(ms: number): Promise<void>;
  stopped(): boolean;
  /** Closes every socket: the new connections bring fresh snapshots. */
  redial(reason: string): Promise<void>;
}

export class CcxtBooks {
  /** Books dropped for a failed sequence or checksum rule. */
  resyncs = 0;
  readonly #options: CcxtBooksOptions;
  /**
   * When ccxt last settled a watcher with each market's book: it does so only for a book that passed
   * the venue's checks, so these are the books in sync; a failed check or a lost socket removes one.
   */
  readonly #settledAt = new Map<string, number>();
  /** Book resyncs: when each began, and the markets whose book has not come back since. */
  readonly #resyncStartedAt = new Map<string, number>();
  readonly #resyncing = new Set<string>();

  constructor(options: CcxtBooksOptions) {
    this.#options = options;
  }

  /** ccxt settled a watcher with this market's book. */
  settled(symbol: string): void {
    if (!this.#options.byUnified.has(symbol)) return;
    this.#settledAt.set(symbol, Date.now());
    this.#resyncing.delete(symbol);
  }

  /**
   * A book failed the venue's sequence or checksum rule (seen as ccxt rejects its watchers with it:
   * ccxt settles at most the watchers waiting at that moment, so the markets the error names are
   * resynced, whoever caught it). Some ccxt classes resubscribe a bad book themselves, and the next
   * snapshot settles it again; a book still out after `resyncGraceMs` means the class kept the broken
   * subscription, and a new connection brings fresh snapshots (then again, waiting twice as long).
   */
  broken(err: Error): void {
    const now = Date.now();
    for (const symbol of this.#options.byUnified.keys()) {
      if (!err.message.includes(symbol)) continue;
      this.#settledAt.delete(symbol);
      if (this.#resyncing.has(symbol)) continue;
      this.#resyncing.add(symbol);
      const startedAt = this.#resyncStartedAt.get(symbol);
      // ccxt may report one failure once per bad message: that is still one resync.
      if (startedAt !== undefined && now - startedAt < this.#options.resyncGraceMs) continue;
      this.#resyncStartedAt.set(symbol, now);
      this.resyncs += 1;
      this.#options.log.warn({ symbol, reason: err.message }, 'book resync');
      void this.#redialWhileOut(symbol);
    }
  }

  async #redialWhileOut(symbol: string): Promise<void> {
    const { wait, stopped, log, resyncGraceMs, maxGraceMs } = this.#options;
    for (let grace = resyncGraceMs; ; grace = Math.min(2 * grace, maxGraceMs)) {
      await wait(grace);
      if (stopped() || !this.#resyncing.has(symbol)) return;
      log.warn({ symbol }, 'book still out of sync: reconnecting');
      await this.#options.redial(`book of ${symbol} out of sync: a new connection brings fresh snapshots`);
    }
  }

  /** A lost connection leaves ccxt's books stale (some classes merge the next snapshot into them): they restart from the resubscription's snapshot. */
  lost(symbols: readonly string[]): void {
    for (const s of symbols) {
      this.#settledAt.delete(s);
      delete this.#options.exchange.orderbooks[s];
    }
  }

  /** Markets no longer followed (delisted): their books are no longer published. */
  drop(symbols: readonly string[]): void {
    this.lost(symbols);
    for (const s of symbols) {
      this.#resyncing.delete(s);
      this.#resyncStartedAt.delete(s);
    }
  }

  /** The books ccxt last settled a watcher with, cut to `depth` levels a side, as events. */
  events(depth: number): BookEvent[] {
    const { exchange, byUnified, venueId } = this.#options;
    const events: BookEvent[] = [];
    for (const [unified, receivedAt] of this.#settledAt) {
      const book = exchange.orderbooks[unified] as CcxtOrderBook | undefined;
      if (!book) continue;
      const market = byUnified.get(unified);
      if (!market) continue;
      const side = (levels: CcxtOrderBook['bids']): Level[] =>
        levels.slice(0, depth).map(([p, q]): Level => [p ?? Number.NaN, typeof q === 'number' ? decimalProduct(decimalText(exchange, q), market.contractSize) : Number.NaN]);
      const event = toBookEvent(venueId, market, { bids: side(book.bids), asks: side(book.asks) }, Math.floor(book.timestamp ?? receivedAt), receivedAt);
      if (event) events.push(event);
    }
    return events;
  }
}
