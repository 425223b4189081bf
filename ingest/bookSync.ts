import { OrderBook, type RawLevel } from './orderBook.ts';
import type { BookMessage, BookRule, RestSnapshot, VenueMarket } from './venue.ts';

/** Updates buffered while a REST snapshot is fetched; more means the snapshot is hopelessly behind. */
const maxBuffered = 5_000;

/** 'overflow': buffered, as the first update of a buffer started over because the previous one reached its bound. */
export type BookOutcome = 'buffered' | 'overflow' | 'ignored' | 'snapshot' | 'applied' | 'stale' | 'gap' | 'checksum';

/**
 * One market's local book, kept by its venue's rule: a snapshot (from the stream, or from REST with
 * the updates that arrived meanwhile buffered), then only updates that continue the sequence and
 * leave the book matching the venue's checksum. A gap or a bad checksum discards the book and is
 * counted in `resyncs`; the collector then asks the venue for a fresh snapshot.
 */
export class BookSync {
  readonly book = new OrderBook();
  /** Times the book was discarded because an update did not continue it or its checksum failed. */
  resyncs = 0;
  /**
   * Times the buffer reached its bound while a REST snapshot was awaited and was started over. Nothing
   * is lost (a later snapshot supersedes it), but a count that grows says the venue's snapshots are
   * hopelessly behind its stream.
   */
  bufferOverflows = 0;
  readonly #rule: BookRule;
  readonly #market: VenueMarket;
  #synced = false;
  #buffer: BookMessage[] = [];
  #lastId = -1;
  #fresh = false;

  constructor(rule: BookRule, market: VenueMarket) {
    this.#rule = rule;
    this.#market = market;
  }

  get synced(): boolean {
    return this.#synced;
  }

  /** REST-snapshot venues: updates are being buffered and the book is not live. */
  get wantsRestSnapshot(): boolean {
    return this.#rule.restSnapshot !== undefined && !this.#synced && this.#buffer.length > 0;
  }

  onMessage(message: BookMessage): BookOutcome {
    if (message.snapshot) {
      this.#load(message.bids, message.asks, message.lastId ?? -1);
      return this.#checksumHolds(message) ? 'snapshot' : this.#fail(undefined, 'checksum');
    }
    if (!this.#synced) {
      if (!this.#rule.restSnapshot) return 'ignored';
      if (this.#buffer.length >= maxBuffered) {
        this.bufferOverflows += 1;
        this.#buffer = [message];
        return 'overflow';
      }
      this.#buffer.push(message);
      return 'buffered';
    }
    return this.#apply(message);
  }

  /** 'refetch' when the snapshot is older than the first buffered update. */
  onRestSnapshot(snapshot: RestSnapshot): 'synced' | 'refetch' | 'gap' | 'checksum' {
    const first = this.#buffer[0];
    if (!first || snapshot.lastId < (first.firstId ?? first.lastId ?? Infinity)) return 'refetch';
    const buffered = this.#buffer;
    this.#load(snapshot.bids, snapshot.asks, snapshot.lastId);
    for (const update of buffered) {
      const outcome = this.#apply(update);
      if (outcome === 'gap' || outcome === 'checksum') return outcome;
    }
    return 'synced';
  }

  /** The venue says messages were lost (a connection-wide sequence jumped): the book is counted and dropped. */
  invalidate(): void {
    if (!this.#synced && this.#buffer.length === 0) return;
    this.resyncs += 1;
    this.reset();
  }

  /** Forget everything, e.g. after a reconnect, where losing the book is expected. */
  reset(): void {
    this.book.clear();
    this.#buffer = [];
    this.#synced = false;
    this.#lastId = -1;
    this.#fresh = false;
  }

  #load(bids: readonly RawLevel[], asks: readonly RawLevel[], lastId: number): void {
    this.book.clear();
    for (const level of bids) this.book.set('bid', level);
    for (const level of asks) this.book.set('ask', level);
    if (this.#rule.depth) this.book.truncate(this.#rule.depth);
    this.#buffer = [];
    this.#lastId = lastId;
    this.#synced = true;
    this.#fresh = true;
  }

  #apply(update: BookMessage): 'applied' | 'stale' | 'gap' | 'checksum' {
    const verdict = this.#rule.sequence?.(this.#lastId, update, this.#fresh) ?? 'apply';
    if (verdict === 'stale') return 'stale';
    if (verdict === 'gap') return this.#fail(update, 'gap');
    for (const level of update.bids) this.book.set('bid', level);
    for (const level of update.asks) this.book.set('ask', level);
    if (this.#rule.depth) this.book.truncate(this.#rule.depth);
    if (update.lastId !== undefined) this.#lastId = update.lastId;
    this.#fresh = false;
    return this.#checksumHolds(update) ? 'applied' : this.#fail(undefined, 'checksum');
  }

  #checksumHolds(message: BookMessage): boolean {
    const { checksum } = this.#rule;
    return !checksum || message.checksum === undefined || checksum(this.book, this.#market) === message.checksum;
  }

  #fail<T extends 'gap' | 'checksum'>(update: BookMessage | undefined, outcome: T): T {
    this.resyncs += 1;
    this.reset();
    // REST-snapshot venues: the update that showed the gap is the first of the next buffer.
    if (update && this.#rule.restSnapshot) this.#buffer.push(update);
    return outcome;
  }
}

/** A connection-wide message counter (Coinbase's sequence_num): any jump means a message was lost. */
export class ConnectionSequence {
  #last: number | undefined;

  /** 'gap' when `value` does not follow the previous one; the first value of a connection always fits. */
  observe(value: number): 'ok' | 'gap' {
    const last = this.#last;
    this.#last = value;
    return last === undefined || value === last + 1 ? 'ok' : 'gap';
  }

  reset(): void {
    this.#last = undefined;
  }
}
