/**
 * What a simulated venue sent, kept bounded: a demo runs for days, so only the last `retain` items
 * stay in memory for tests to compare with what a collector received; `count` counts them all,
 * and `onPush` sees each one (a caller that must see every item listens there).
 */
export class SentHistory<T> {
  readonly retain: number;
  readonly #onPush: ((item: T) => void) | undefined;
  #count = 0;
  /** The newest items, at most 2 × retain: trimmed in one slice once it reaches that, not on every push. */
  #kept: T[] = [];

  constructor(retain: number, onPush?: (item: T) => void) {
    if (!Number.isSafeInteger(retain) || retain < 1) throw new RangeError(`retain must be a positive integer, got ${retain}`);
    this.retain = retain;
    this.#onPush = onPush;
  }

  push(...items: T[]): void {
    this.#count += items.length;
    this.#kept.push(...items);
    if (this.#onPush) for (const item of items) this.#onPush(item);
    if (this.#kept.length >= 2 * this.retain) this.#kept = this.#kept.slice(-this.retain);
  }

  /** Items sent since this history started, including those no longer kept. */
  get count(): number {
    return this.#count;
  }

  /** The last `retain` items sent (fewer when fewer were sent), oldest first. */
  recent(): T[] {
    return this.#kept.slice(-this.retain);
  }

  /**
   * Every item sent after the first `sent` items (`since(0)`: all of them). Throws when some of
   * them are no longer kept, so a test never compares against a silently shortened list.
   */
  since(sent: number): T[] {
    const first = this.#count - this.#kept.length;
    if (sent < first) throw new RangeError(`items ${sent}..${first - 1} are no longer kept (the last ${this.retain} are)`);
    return this.#kept.slice(sent - first);
  }
}
