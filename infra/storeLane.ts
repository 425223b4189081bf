import { StoreTimeoutError, type Store } from './store.ts';

/**
 * Why a lane: chDB runs the queries that carry parameters (all of ours) one at a time, in the
 * order they were sent (the chdb package serialises them process-wide: its parameter state is not
 * per connection). In a process that aggregates, the index runner sends its input queries in
 * bursts; an API query sent after a burst waited for all of it. The pipeline's queries go through
 * this lane, which lets only `inFlight` of them into the engine's queue at once, so that a query
 * sent around the lane (the API's) waits for at most that many.
 */
export interface LaneOptions {
  /** Queries of the lane in the engine at once; the others wait here, first come first served. */
  inFlight: number;
  /** A query that waits here longer fails as the store's own deadline would (StoreTimeoutError). */
  waitMs: number;
  /** Called with the number of queries waiting here whenever it changes (a gauge). */
  onWaiting?: (waiting: number) => void;
}

/** A first-come first-served gate of `limit` places. */
class Gate {
  readonly #limit: number;
  #taken = 0;
  readonly #waiting: Array<() => void> = [];
  readonly #onWaiting: (waiting: number) => void;

  constructor(limit: number, onWaiting: (waiting: number) => void) {
    this.#limit = limit;
    this.#onWaiting = onWaiting;
  }

  /** Resolves once a place is taken; rejects with `timeout` when none came within `waitMs`. */
  enter(waitMs: number, timeout: () => Error): Promise<void> {
    if (this.#taken < this.#limit && this.#waiting.length === 0) {
      this.#taken++;
      return Promise.resolve();
    }
    return new Promise<void>((resolve, reject) => {
      const admit = () => {
        clearTimeout(timer);
        this.#taken++;
        resolve();
      };
      const timer = setTimeout(() => {
        this.#remove(admit);
        reject(timeout());
      }, waitMs);
      this.#waiting.push(admit);
      this.#onWaiting(this.#waiting.length);
    });
  }

  leave(): void {
    this.#taken--;
    const next = this.#waiting.shift();
    if (!next) return;
    this.#onWaiting(this.#waiting.length);
    next();
  }

  #remove(admit: () => void): void {
    const at = this.#waiting.indexOf(admit);
    if (at >= 0) this.#waiting.splice(at, 1);
    this.#onWaiting(this.#waiting.length);
  }
}

/** `store` whose queries go through a lane (LaneOptions); inserts, which chDB runs side by side, pass straight. */
export function laneStore(store: Store, options: LaneOptions): Store {
  const gate = new Gate(options.inFlight, options.onWaiting ?? (() => {}));
  return {
    ...store,
    client: store.client,
    description: store.description,
    insert: (table, rows, dedupToken) => store.insert(table, rows, dedupToken),
    async rows<T>(query: string, params?: Record<string, unknown>): Promise<T[]> {
      await gate.enter(options.waitMs, () => new StoreTimeoutError('query', options.waitMs));
      try {
        return await store.rows<T>(query, params);
      } finally {
        gate.leave();
      }
    },
    close: () => store.close(),
  };
}
