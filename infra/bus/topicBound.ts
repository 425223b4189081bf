import type { Held } from './partitionLog.ts';

/**
 * What one topic of the in-process bus holds over its partitions, in records and estimated heap
 * bytes, against its bound in each: the bound is what keeps a stalled reader from growing the heap.
 */
export class TopicBound {
  readonly maxRecords: number;
  readonly maxBytes: number;
  #records = 0;
  #bytes = 0;

  constructor(maxRecords: number, maxBytes: number) {
    this.maxRecords = maxRecords;
    this.maxBytes = maxBytes;
  }

  /** What the topic holds now. */
  held(): Held {
    return { records: this.#records, bytes: this.#bytes };
  }

  /** Whether one more record of `bytes` would pass the bound, in records or in bytes. */
  wouldOverflow(bytes: number): boolean {
    return this.#records + 1 > this.maxRecords || this.#bytes + bytes > this.maxBytes;
  }

  /** Whether the topic holds at least `share` of its bound, in records or in bytes. */
  holdsShare(share: number): boolean {
    return this.#records >= this.maxRecords * share || this.#bytes >= this.maxBytes * share;
  }

  /** Counts a record taken in. */
  add(bytes: number): void {
    this.#records += 1;
    this.#bytes += bytes;
  }

  /** Counts a record whose event was replaced: its bytes change by `delta`, its count does not. */
  resize(delta: number): void {
    this.#bytes += delta;
  }

  /** Counts records released. */
  remove(freed: Held): void {
    this.#records -= freed.records;
    this.#bytes -= freed.bytes;
  }
}
