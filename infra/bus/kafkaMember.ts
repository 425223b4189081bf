import type { Batch, Consumer, Kafka } from 'kafkajs';
import type { Topic } from '../events.ts';
import type { Logger } from '../log.ts';
import type { BusRecord, CommitPosition, SubscribeOptions, Subscription } from './bus.ts';
import { decodeEvent } from './kafkaCodec.ts';
import type { ReportedLags } from './reportedLags.ts';
import { UncommittedSpans } from './uncommittedSpans.ts';

const retryDelayMs = 200;

export interface KafkaMemberContext {
  kafka: Kafka;
  /** Consumer group session timeout (ms). */
  sessionTimeout: number;
  lags: ReportedLags;
  /** Counts a message that failed its schema. */
  invalid: () => void;
  log?: Logger;
}

/**
 * One subscription of the Kafka bus: a kafkajs consumer of its own that never auto-commits. It
 * validates what it receives (skipping what fails, counted), reports each partition's lag, keeps
 * its heartbeat while the caller holds a batch, and after a failed batch rewinds every partition
 * it was handed since its last commit there.
 */
export class KafkaMember<T extends Topic> implements Subscription {
  readonly consumer: Consumer;
  readonly #options: SubscribeOptions<T>;
  readonly #context: KafkaMemberContext;
  readonly #uncommitted = new UncommittedSpans();

  constructor(options: SubscribeOptions<T>, context: KafkaMemberContext) {
    this.#options = options;
    this.#context = context;
    const { sessionTimeout } = context;
    this.consumer = context.kafka.consumer({
      groupId: options.group,
      sessionTimeout,
      heartbeatInterval: Math.min(3_000, Math.floor(sessionTimeout / 3)),
      // A broker answers a fetch as soon as it has bytes, but librdkafka's mock cluster (the tests'
      // and bench's broker) holds every fetch for the whole wait: 1 s added 0.5 s median, 1 s at p99,
      // to every event's trip. 100 ms costs an idle consumer 10 fetches a second, and bounds stop().
      maxWaitTimeInMs: 100,
    });
  }

  /** Joins the group and starts reading. */
  async start(): Promise<void> {
    const { consumer } = this;
    this.#context.lags.joined(this.#options.group);
    consumer.on(consumer.events.GROUP_JOIN, () => {
      this.#uncommitted.clear();
      this.#options.onAssignment?.();
    });
    await consumer.connect();
    await consumer.subscribe({ topics: [...this.#options.topics], fromBeginning: this.#options.start !== 'latest' });
    await consumer.run({ autoCommit: false, eachBatchAutoResolve: true, eachBatch: ({ batch, heartbeat }) => this.#receive(batch, heartbeat) });
  }

  async commit(positions: readonly CommitPosition[]): Promise<void> {
    await this.consumer.commitOffsets(positions.map((p) => ({ topic: p.topic, partition: p.partition, offset: String(p.offset) })));
    this.#uncommitted.committed(positions);
  }

  async stop(): Promise<void> {
    this.#context.lags.left(this.#options.group);
    await this.consumer.disconnect();
  }

  async #receive(batch: Batch, heartbeat: () => Promise<void>): Promise<void> {
    const topic = batch.topic as T;
    const { partition } = batch;
    const { group } = this.#options;
    const records = this.#decode(batch);
    this.#context.lags.report(group, topic, partition, Number(batch.offsetLag()));
    const first = batch.messages[0];
    if (!first) return;
    this.#uncommitted.delivered(topic, partition, Number(first.offset), Number(batch.lastOffset()) + 1);
    if (records.length === 0) return;
    // A consumer that holds delivery (e.g. while its store is down) must stay in the group.
    const beat = setInterval(() => void heartbeat().catch(() => {}), 1_000);
    try {
      await this.#options.onBatch(records);
    } catch (err) {
      // Redeliver from the committed position: rewind every partition delivered since its last commit.
      this.#context.log?.warn({ err, group }, 'consumer batch failed; redelivering from the committed position');
      for (const p of this.#uncommitted.rewind()) this.consumer.seek({ topic: p.topic, partition: p.partition, offset: String(p.offset) });
      await new Promise((r) => setTimeout(r, retryDelayMs));
    } finally {
      clearInterval(beat);
    }
  }

  /** The batch's valid records; each invalid message is counted and logged, and skipped. */
  #decode(batch: Batch): BusRecord<T>[] {
    const topic = batch.topic as T;
    const { partition } = batch;
    const records: BusRecord<T>[] = [];
    for (const message of batch.messages) {
      const event = decodeEvent(topic, message.value);
      if (event === undefined) {
        this.#context.invalid();
        this.#context.log?.warn({ topic, partition, offset: message.offset }, 'skipping an invalid message');
        continue;
      }
      records.push({ topic, partition, offset: Number(message.offset), event } as BusRecord<T>);
    }
    return records;
  }
}
