// When a native collector asks a venue for a fresh book: the two ways venues give one. A venue
// whose stream carries only changes is asked over REST, a few markets at a time (each request costs
// weight at the venue); a venue that streams snapshots is asked by resubscribing, at most every
// 10 s per market while the first request is unanswered.
import type { Logger } from '../infra/log.ts';

export interface RestSnapshotQueueOptions {
  /** Snapshots fetched at once. */
  concurrency: number;
  /** Whether a market still waits for a REST snapshot: not once it is synced, or delisted. */
  wants(symbol: string): boolean;
  /** Fetches one market's snapshot and applies it; a throw is a failed fetch. */
  fetch(symbol: string): Promise<void>;
  /** True once the collector stops: nothing more is fetched. */
  stopped(): boolean;
  log: Logger;
}

/**
 * After a fetch that left its market unsynced (it failed, or the snapshot was older than the updates
 * buffered), its slot stays taken this long, so a venue that refuses or lags is not asked again at once.
 */
export const refetchPauseMs = 1_000;

/**
 * REST snapshots, fetched `concurrency` at a time in the order asked, each market queued once. A
 * market still unsynced after its fetch is queued again after the pause: a quiet market sends no
 * further update that would ask for it.
 */
export class RestSnapshotQueue {
  readonly #options: RestSnapshotQueueOptions;
  readonly #fetching = new Set<string>();
  readonly #queue: string[] = [];

  constructor(options: RestSnapshotQueueOptions) {
    this.#options = options;
  }

  /** Markets being fetched now. */
  get fetching(): readonly string[] {
    return [...this.#fetching];
  }

  /** Markets waiting for a free slot, in order. */
  get queued(): readonly string[] {
    return [...this.#queue];
  }

  /** Queues the markets that want a snapshot and are neither queued nor being fetched, and starts what the slots allow. */
  request(symbols: readonly string[]): void {
    for (const symbol of symbols) {
      if (!this.#options.wants(symbol) || this.#fetching.has(symbol) || this.#queue.includes(symbol)) continue;
      this.#queue.push(symbol);
    }
    this.#pump();
  }

  #pump(): void {
    const { concurrency, wants, stopped } = this.#options;
    while (!stopped() && this.#fetching.size < concurrency && this.#queue.length > 0) {
      const symbol = this.#queue.shift()!;
      // Synced or delisted since it was queued: nothing to fetch any more.
      if (!wants(symbol)) continue;
      this.#fetching.add(symbol);
      void this.#fetch(symbol);
    }
  }

  async #fetch(symbol: string): Promise<void> {
    const { fetch, wants, stopped, log } = this.#options;
    try {
      await fetch(symbol);
    } catch (err) {
      log.warn({ symbol, err: (err as Error).message }, 'book snapshot failed');
    }
    const again = wants(symbol) && !stopped();
    if (again) await new Promise((resolve) => setTimeout(resolve, refetchPauseMs));
    this.#fetching.delete(symbol);
    if (again && wants(symbol) && !this.#queue.includes(symbol)) this.#queue.push(symbol);
    this.#pump();
  }
}

/** Snapshot requests for a market are not repeated sooner than this while the first is unanswered. */
export const resubscribeEveryMs = 10_000;

/** For venues that stream snapshots: which markets may be resubscribed now. */
export class ResubscribeThrottle {
  readonly #askedAt = new Map<string, number>();

  /** The markets not asked for within `resubscribeEveryMs`, marked as asked now. */
  take(symbols: readonly string[], now = Date.now()): string[] {
    const due = symbols.filter((s) => now - (this.#askedAt.get(s) ?? 0) >= resubscribeEveryMs);
    for (const s of due) this.#askedAt.set(s, now);
    return due;
  }

  /** A (re)subscription asks for every snapshot of its markets itself. */
  subscribed(symbols: readonly string[], now = Date.now()): void {
    for (const s of symbols) this.#askedAt.set(s, now);
  }

  /** The market's snapshot came: a later request goes at once. */
  answered(symbol: string): void {
    this.#askedAt.delete(symbol);
  }
}
