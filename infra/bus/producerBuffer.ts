import type { Message } from 'kafkajs';
import { topics, type Topic } from '../events.ts';
import type { Held } from './partitionLog.ts';

/** One event on its way to the broker: its topic, its encoded message, and its place in publish order. */
export interface Outgoing {
  /** 1 for the first event publish took, then one more for each. */
  seq: number;
  topic: Topic;
  message: Message;
}

/**
 * The Kafka producer's buffer: the events publish took and the broker has not acknowledged yet,
 * oldest first. It holds at most `maxBuffered` waiting events; the request under way (`inFlight`)
 * has left that bound but is still held, so a flush still waits for it and `stats` still counts it.
 * A failed request goes back in front, and what then passes the bound is refused newest first:
 * what an earlier flush waits for is never refused for what came after it.
 */
export class ProducerBuffer {
  readonly maxBuffered: number;
  #pending: Outgoing[] = [];
  #inFlight: Outgoing[] = [];
  #taken = 0;

  constructor(maxBuffered: number) {
    this.maxBuffered = maxBuffered;
  }

  /** Events waiting to be sent (not counting the request under way). */
  get waiting(): number {
    return this.#pending.length;
  }

  /** The number of the last event taken: a flush waits for every event up to it. */
  get lastSeq(): number {
    return this.#taken;
  }

  /** Whether the buffer holds its bound: publish refuses until a request takes some. */
  get full(): boolean {
    return this.#pending.length >= this.maxBuffered;
  }

  /** Takes an event (the caller checked `full`). */
  push(topic: Topic, message: Message): void {
    this.#taken += 1;
    this.#pending.push({ seq: this.#taken, topic, message });
  }

  /** Takes the oldest `max` waiting events as the request under way. */
  startRequest(max: number): Outgoing[] {
    this.#inFlight = this.#pending.splice(0, max);
    return this.#inFlight;
  }

  /** The request under way was acknowledged: its events are no longer held. */
  sent(): void {
    this.#inFlight = [];
  }

  /**
   * The request under way failed: its events go back in front of those waiting, and what passes
   * the bound then is returned, newest last, to be refused.
   */
  failed(): Outgoing[] {
    this.#pending = this.#inFlight.concat(this.#pending);
    this.#inFlight = [];
    return this.#pending.splice(this.maxBuffered);
  }

  /** How many of the events numbered up to `seq` are still held (neither sent nor refused). */
  heldUpTo(seq: number): number {
    let held = 0;
    for (const e of this.#inFlight) if (e.seq <= seq) held += 1;
    for (const e of this.#pending) if (e.seq <= seq) held += 1;
    return held;
  }

  /** Per topic, the events held (in flight and waiting) and the length of their encoded values. */
  heldByTopic(): Map<Topic, Held> {
    const held = new Map<Topic, Held>(topics.map((t) => [t, { records: 0, bytes: 0 }]));
    for (const { topic, message } of [...this.#inFlight, ...this.#pending]) {
      const h = held.get(topic)!;
      h.records += 1;
      h.bytes += (message.value as string).length;
    }
    return held;
  }
}
