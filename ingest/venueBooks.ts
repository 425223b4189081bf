// The books of a native collector: one BookSync per followed market (ingest/bookSync.ts applies the
// venue's rule), what each book message's outcome asks for (a REST snapshot or a resubscription,
// through ingest/snapshotScheduler.ts), and the synced books as events.
import type { BookEvent } from '../infra/events.ts';
import type { Logger } from '../infra/log.ts';
import { BookSync } from './bookSync.ts';
import { toBookEvent, toLevels } from './normalize.ts';
import { ResubscribeThrottle, RestSnapshotQueue } from './snapshotScheduler.ts';
import type { BookMessage, VenueDescriptor, VenueEndpoints, VenueIo, VenueMarket } from './venue.ts';

/** The socket that carries a market's book stream, as far as asking for a snapshot goes. */
export interface BookChannel {
  /** The venue's messages that make it send these markets' books again on this socket; undefined when it has none. */
  readonly resubscribeMessages: ((symbols: readonly string[]) => string[]) | undefined;
  send(messages: readonly string[]): void;
}

export interface VenueBooksOptions {
  venue: Pick<VenueDescriptor, 'id' | 'book' | 'channels'>;
  endpoints: VenueEndpoints;
  /** REST snapshots are fetched through it. */
  io: Pick<VenueIo, 'getJson'>;
  log: Logger;
  /** REST snapshots fetched at once. */
  snapshotConcurrency: number;
  stopped(): boolean;
}

interface Kept {
  market: VenueMarket;
  sync: BookSync;
  /** Venue time and receive time of the last book message applied. */
  times?: { ts: number; receivedAt: number };
}

export class VenueBooks {
  readonly #options: VenueBooksOptions;
  readonly #books = new Map<string, Kept>();
  readonly #restQueue: RestSnapshotQueue | undefined;
  readonly #throttle = new ResubscribeThrottle();

  constructor(options: VenueBooksOptions) {
    this.#options = options;
    const rest = options.venue.book.restSnapshot;
    this.#restQueue = rest && new RestSnapshotQueue({
      concurrency: options.snapshotConcurrency,
      wants: (symbol) => this.#books.get(symbol)?.sync.wantsRestSnapshot ?? false,
      fetch: (symbol) => this.#fetchSnapshot(symbol),
      stopped: options.stopped,
      log: options.log,
    });
  }

  /** Keeps the market's book, when the venue's books are collected. */
  follow(market: VenueMarket): void {
    if (this.#options.venue.channels.includes('books')) this.#books.set(market.symbol, { market, sync: new BookSync(this.#options.venue.book, market) });
  }

  /** A delisted market: its book is gone, its messages are ignored. */
  drop(symbol: string): void {
    this.#books.delete(symbol);
  }

  /** A socket (re)opened: updates missed while it was down make its books stale, and its subscription asks for every snapshot. */
  restart(symbols: readonly string[]): void {
    for (const symbol of symbols) this.#books.get(symbol)?.sync.reset();
    this.#throttle.subscribed(symbols);
  }

  /** Messages were lost on a socket (a connection-wide sequence jumped): every book it carries is suspect. */
  invalidate(symbols: readonly string[], channel: BookChannel): void {
    for (const symbol of symbols) this.#books.get(symbol)?.sync.invalidate();
    this.requestSnapshots(channel, symbols);
  }

  onBook(channel: BookChannel, m: BookMessage, receivedAt: number): void {
    const kept = this.#books.get(m.symbol);
    if (!kept) return;
    const { sync } = kept;
    const outcome = sync.onMessage(m);
    switch (outcome) {
      case 'snapshot':
        this.#throttle.answered(m.symbol);
        kept.times = { ts: m.ts ?? receivedAt, receivedAt };
        return;
      case 'applied':
        kept.times = { ts: m.ts ?? receivedAt, receivedAt };
        return;
      case 'gap':
      case 'checksum':
        this.#options.log.warn({ symbol: m.symbol, reason: outcome === 'gap' ? 'sequence gap' : 'bad checksum' }, 'book resync');
        this.requestSnapshots(channel, [m.symbol]);
        return;
      case 'overflow':
        this.#options.log.warn({ symbol: m.symbol, bufferOverflows: sync.bufferOverflows }, 'book buffer full before its snapshot came: started over');
        this.requestSnapshots(channel, [m.symbol]);
        return;
      case 'buffered':
        if (sync.wantsRestSnapshot) this.requestSnapshots(channel, [m.symbol]);
        return;
      case 'ignored':
        // No snapshot yet (it was lost, or asked for long ago): ask again, at most every few seconds.
        this.requestSnapshots(channel, [m.symbol]);
        return;
      case 'stale':
        return;
    }
  }

  /** Asks the venue for a fresh book of these markets: a REST snapshot, or a resubscription on `channel`. */
  requestSnapshots(channel: BookChannel, symbols: readonly string[]): void {
    if (this.#restQueue) return this.#restQueue.request(symbols);
    const resubscribe = channel.resubscribeMessages;
    if (!resubscribe) return;
    const due = this.#throttle.take(symbols);
    if (due.length > 0) channel.send(resubscribe(due));
  }

  async #fetchSnapshot(symbol: string): Promise<void> {
    const { venue, endpoints, io, log } = this.#options;
    const rest = venue.book.restSnapshot!;
    const kept = this.#books.get(symbol)!;
    const outcome = kept.sync.onRestSnapshot(rest.parse(await io.getJson(rest.url(endpoints.rest, symbol))));
    // The book is the venue's as of the snapshot's answer: published now, since a quiet market may send no update after it.
    if (outcome === 'synced') {
      const answeredAt = Date.now();
      kept.times = { ts: answeredAt, receivedAt: answeredAt };
    }
    if (outcome === 'gap' || outcome === 'checksum') log.warn({ symbol, reason: outcome }, 'book resync');
    else if (outcome !== 'synced') log.debug({ symbol, outcome }, 'book snapshot not usable yet');
  }

  /** The synced books, cut to `depth` levels a side, as events. */
  events(depth: number): BookEvent[] {
    const events: BookEvent[] = [];
    for (const { market, sync, times } of this.#books.values()) {
      if (!sync.synced || !times) continue;
      const levels = { bids: toLevels(sync.book.topRaw('bid', depth), market), asks: toLevels(sync.book.topRaw('ask', depth), market) };
      const event = toBookEvent(this.#options.venue.id, market, levels, times.ts, times.receivedAt);
      if (event) events.push(event);
    }
    return events;
  }

  /** Books dropped for a gap or a bad checksum, over every market still followed. */
  get resyncs(): number {
    return [...this.#books.values()].reduce((n, b) => n + b.sync.resyncs, 0);
  }

  get bufferOverflows(): number {
    return [...this.#books.values()].reduce((n, b) => n + b.sync.bufferOverflows, 0);
  }
}
