// One websocket of a native collector, as its socket plan says, and what the collector must know of
// it: which generation's book stream is current (a replaced socket's is over), the connection-wide
// sequence of venues that number their messages, and the venue's per-connection session.
import type { Logger } from '../infra/log.ts';
import { ConnectionSequence } from './bookSync.ts';
import type { BookChannel } from './venueBooks.ts';
import type { ConnectBudget } from './connectBudget.ts';
import { VenueConnection } from './connection.ts';
import { unknown, type KeepAlive, type SocketPlan, type VenueDescriptor, type VenueIo, type VenueMessage, type VenueSession } from './venue.ts';

export interface VenueSocketOptions {
  plan: SocketPlan;
  venue: Pick<VenueDescriptor, 'sendsPerSecond' | 'parse' | 'session' | 'book' | 'subscribesPerHour'>;
  io: VenueIo;
  log: Logger;
  tuning: { keepAlive: KeepAlive; rotateAfterMs: number | undefined; overlapMs: number; backoff: { baseMs: number; maxMs: number } };
  /** The venue's connection budget, when it documents one: every (re)connect waits its turn. */
  budget?: ConnectBudget;
  /** Whether the venue streams to us on this socket (VenueConnection's onStatus). */
  onStatus(connected: boolean): void;
  /** A socket of this plan opened (at start, after a reconnect, or a rotation's replacement) and subscribes now. */
  onOpen(generation: number): void;
  /** A frame, from the socket of this generation. */
  onFrame(text: string, receivedAt: number, generation: number): void;
  /** Unix ms; the subscribe requests per hour are counted by it. */
  now?: () => number;
}

const hourMs = 3_600_000;

export class VenueSocket implements BookChannel {
  readonly plan: SocketPlan;
  readonly connection: VenueConnection;
  readonly #venue: VenueSocketOptions['venue'];
  /** Book messages count only from the newest socket: a replaced socket's book stream is over. */
  #bookGeneration = 0;
  /** The connection-wide sequence of the newest socket, for venues that number their messages. */
  readonly #sequence = new ConnectionSequence();
  /** Venues with sessions: one per socket generation still open (two while a rotation overlaps). */
  readonly #sessions = new Map<number, VenueSession>();
  /** When the newest socket sent its subscribe requests within the last hour, oldest first (venues with subscribesPerHour). */
  readonly #requestsAt: number[] = [];
  readonly #now: () => number;

  constructor(options: VenueSocketOptions) {
    const { plan, venue, io, log, tuning } = options;
    this.plan = plan;
    this.#venue = venue;
    this.#now = options.now ?? Date.now;
    this.connection = new VenueConnection({
      url: plan.url,
      ...(plan.connectUrl ? { resolve: () => plan.connectUrl!(io) } : {}),
      ...(options.budget ? { admit: () => options.budget!.take() } : {}),
      log,
      keepAlive: tuning.keepAlive,
      sendsPerSecond: venue.sendsPerSecond,
      rotateAfterMs: tuning.rotateAfterMs,
      overlapMs: tuning.overlapMs,
      backoff: tuning.backoff,
      subscribeMessages: () => plan.subscribe,
      onStatus: (connected) => options.onStatus(connected),
      onOpen: (generation) => {
        this.opened(generation);
        options.onOpen(generation);
      },
      onMessage: (text, receivedAt, generation) => options.onFrame(text, receivedAt, generation),
    });
  }

  start(): void {
    this.connection.start();
  }

  close(): Promise<void> {
    return this.connection.close();
  }

  /** True while this socket and its replacement are both open: the same message may arrive twice. */
  get overlapping(): boolean {
    return this.connection.overlapping;
  }

  /** The connection opened a socket of this generation: its book stream is now the current one, with a fresh sequence and session. */
  opened(generation: number): void {
    this.#bookGeneration = generation;
    this.#sequence.reset();
    // A fresh connection: its own hour's allowance, less the subscription it sends now.
    this.#requestsAt.length = 0;
    if (this.#venue.subscribesPerHour !== undefined) this.#requestsAt.push(...this.plan.subscribe.map(() => this.#now()));
    if (this.#venue.session) {
      for (const old of this.#sessions.keys()) if (old < generation - 1) this.#sessions.delete(old);
      this.#sessions.set(generation, this.#venue.session());
    }
  }

  /** What a frame of this generation means; a parser's surprise is an unknown message. */
  parse(text: string, generation: number): VenueMessage[] {
    try {
      const session = this.#sessions.get(generation);
      return session ? session.parse(text) : this.#venue.parse(text);
    } catch {
      // Parsers promise not to throw; a venue's surprise must still not stop the collector.
      return unknown;
    }
  }

  /** Whether book messages of this generation count: only the newest socket's do. */
  carriesBooks(generation: number): boolean {
    return generation === this.#bookGeneration;
  }

  /** False when a connection-wide sequence number of the current socket skipped: a message was lost. */
  sequenceHolds(value: number, generation: number): boolean {
    return generation !== this.#bookGeneration || this.#sequence.observe(value) === 'ok';
  }

  /** The venue asked this generation's socket to reconnect: a rotation, if it is still the newest. */
  rotateOnRequest(detail: string | undefined, generation: number): void {
    if (generation === this.connection.generation) this.connection.rotate(`venue request${detail ? `: ${detail}` : ''}`);
  }

  get resubscribeMessages(): ((symbols: readonly string[]) => string[]) | undefined {
    const session = this.#sessions.get(this.connection.generation);
    return session?.resubscribe ? (s: readonly string[]) => session.resubscribe!(s) : this.#venue.book.resubscribe;
  }

  /**
   * Sends a book resync's requests, or, where they would pass the venue's subscribe requests per
   * connection per hour, rotates the socket instead: the fresh connection has the whole allowance,
   * and its subscription asks for every book of the socket anew.
   */
  send(messages: readonly string[]): void {
    const limit = this.#venue.subscribesPerHour;
    if (limit !== undefined) {
      const now = this.#now();
      while (this.#requestsAt.length > 0 && this.#requestsAt[0]! <= now - hourMs) this.#requestsAt.shift();
      if (this.#requestsAt.length + messages.length > limit) {
        this.connection.rotate(`a book resync would pass the venue's ${limit} subscribe requests per connection per hour`);
        return;
      }
      this.#requestsAt.push(...messages.map(() => now));
    }
    this.connection.send(messages);
  }
}
