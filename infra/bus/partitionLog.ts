import type { MarketEvent, Topic } from '../events.ts';
import type { BusRecord } from './bus.ts';

/** Records and estimated heap bytes, taken into a log or freed from it. */
export interface Held {
  records: number;
  bytes: number;
}

/**
 * One topic partition of the in-process bus: its records from `base` on, each with its estimated
 * heap bytes. Offsets only grow; the oldest records are released once every group reading the
 * topic has committed them (the rule is `ConsumerGroups.releasePoint`'s; this log only obeys it).
 */
export class PartitionLog {
  readonly topic: Topic;
  readonly partition: number;
  #base = 0;
  readonly #records: BusRecord[] = [];
  /** Estimated bytes of each record, parallel to `#records`. */
  readonly #sizes: number[] = [];

  constructor(topic: Topic, partition: number) {
    this.topic = topic;
    this.partition = partition;
  }

  /** The oldest offset still held. */
  get base(): number {
    return this.#base;
  }

  /** The offset the next record takes. */
  get end(): number {
    return this.#base + this.#records.length;
  }

  /** Appends `event` (estimated at `bytes`) and returns its record. */
  append(event: MarketEvent, bytes: number): BusRecord {
    const record = { topic: this.topic, partition: this.partition, offset: this.end, event } as BusRecord;
    this.#records.push(record);
    this.#sizes.push(bytes);
    return record;
  }

  /** The records held from `from` up to, not including, `to` (both within the held range). */
  read(from: number, to: number): BusRecord[] {
    return this.#records.slice(from - this.#base, to - this.#base);
  }

  /** Whether the record at `offset` is still held. */
  holds(offset: number): boolean {
    return offset >= this.#base && offset < this.end;
  }

  /** Puts `event` in place of the held record at `offset`; returns the change in held bytes. */
  replace(offset: number, event: MarketEvent, bytes: number): number {
    const i = offset - this.#base;
    const before = this.#sizes[i]!;
    this.#records[i]!.event = event;
    this.#sizes[i] = bytes;
    return bytes - before;
  }

  /** Releases every held record before `offset`; returns what it freed. */
  releaseBefore(offset: number): Held {
    const n = Math.min(offset - this.#base, this.#records.length);
    if (n <= 0) return { records: 0, bytes: 0 };
    this.#records.splice(0, n);
    const bytes = this.#sizes.splice(0, n).reduce((a, b) => a + b, 0);
    this.#base += n;
    return { records: n, bytes };
  }
}
