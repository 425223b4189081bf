import type { Message, Producer } from 'kafkajs';
import type { MarketEvent, Topic } from '../events.ts';
import type { Logger } from '../log.ts';
import { decodeEvent, encodeEvent } from './kafkaCodec.ts';
import type { Held } from './partitionLog.ts';
import { ProducerBuffer } from './producerBuffer.ts';
import type { PublishGate } from './publishGate.ts';

const produceRetryMs = 1_000;

export interface KafkaSenderOptions {
  /** How long (ms) published events wait to be sent together. */
  lingerMs: number;
  /** Events per produce request; reaching it sends at once. */
  maxBatch: number;
  /** Events waiting to be sent before publish starts refusing. */
  maxBuffered: number;
  log?: Logger;
}

/**
 * The producing half of the Kafka bus: publish validates and buffers (never awaiting the broker),
 * a request goes out when a batch is full or the linger is over, one request at a time so events
 * of one asset keep their order, and a failed request is retried a second later on its own.
 */
export class KafkaSender {
  readonly #producer: Producer;
  readonly #gate: PublishGate;
  readonly #options: KafkaSenderOptions;
  readonly #buffer: ProducerBuffer;
  #lastSendFailed = false;
  #sending: Promise<void> = Promise.resolve();
  #timer: NodeJS.Timeout | undefined;

  constructor(producer: Producer, gate: PublishGate, options: KafkaSenderOptions) {
    this.#producer = producer;
    this.#gate = gate;
    this.#options = options;
    this.#buffer = new ProducerBuffer(options.maxBuffered);
  }

  publish(events: readonly MarketEvent[]): void {
    for (const event of events) {
      const topic = this.#gate.validate(event);
      if (!topic) continue;
      if (this.#buffer.full) {
        this.#gate.refuse(topic, { reason: 'producer buffer full', pending: this.#buffer.waiting }, 1, [event]);
        continue;
      }
      this.#buffer.push(topic, encodeEvent(event));
    }
    if (this.#buffer.waiting >= this.#options.maxBatch) void this.#send();
    else if (this.#buffer.waiting > 0) this.#schedule(this.#options.lingerMs);
  }

  /** Sends until every event published before the call is out; rejects while some cannot be. */
  async flush(): Promise<void> {
    const target = this.#buffer.lastSeq;
    // Events published while a send is under way join a later request: send until ours are out.
    while (this.#buffer.heldUpTo(target) > 0) {
      await this.#send();
      const held = this.#buffer.heldUpTo(target);
      if (this.#lastSendFailed && held > 0) throw new Error(`kafka unavailable: ${held} events not sent yet`);
    }
  }

  /** Per topic, what is held: waiting, or in the request under way. */
  held(): Map<Topic, Held> {
    return this.#buffer.heldByTopic();
  }

  /** No linger or retry runs after this. */
  stop(): void {
    if (this.#timer) clearTimeout(this.#timer);
  }

  #send(): Promise<void> {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#sending = this.#sending.then(async () => {
      while (this.#buffer.waiting > 0) if (!(await this.#sendOne())) return;
    });
    return this.#sending;
  }

  /** Sends one request; false when it failed (a retry is then scheduled). */
  async #sendOne(): Promise<boolean> {
    const batch = this.#buffer.startRequest(this.#options.maxBatch);
    const byTopic = new Map<Topic, Message[]>();
    for (const { topic, message } of batch) {
      const messages = byTopic.get(topic);
      if (messages) messages.push(message);
      else byTopic.set(topic, [message]);
    }
    try {
      await this.#producer.sendBatch({ topicMessages: [...byTopic].map(([topic, messages]) => ({ topic, messages })) });
    } catch (err) {
      // kafkajs has already retried; keep the events in front (bounded) and try again later.
      this.#lastSendFailed = true;
      for (const { topic, message } of this.#buffer.failed()) {
        const event = decodeEvent(topic, message.value);
        this.#gate.refuse(topic, { reason: 'kafka unavailable', pending: this.#options.maxBuffered }, 1, event ? [event] : []);
      }
      this.#options.log?.error({ err, events: batch.length }, 'kafka produce failed; will retry');
      this.#schedule(produceRetryMs);
      return false;
    }
    this.#buffer.sent();
    for (const [topic, messages] of byTopic) this.#gate.accepted(topic, messages.length);
    this.#lastSendFailed = false;
    return true;
  }

  #schedule(delayMs: number): void {
    this.#timer ??= setTimeout(() => void this.#send(), delayMs);
  }
}
