import { Kafka, Partitioners, logLevel, type Consumer, type LogEntry, type Message } from 'kafkajs';
import { schemaOfTopic, type MarketEvent, type Topic } from '../events.ts';
import type { Logger } from '../log.ts';
import type { Bus, BusRecord, SubscribeOptions, Subscription } from './bus.ts';
import { PublishGate } from './publishGate.ts';

export interface KafkaBusOptions {
  brokers: string[];
  clientId?: string;
  log?: Logger;
  /** How long (ms) published events wait to be sent together. */
  lingerMs?: number;
  /** Events per produce request; reaching it sends at once. */
  maxBatch?: number;
  /** Events waiting to be sent before publish starts dropping. */
  maxBuffered?: number;
}

const schemaVersion = '1';

/** kafkajs logs through our logger, warnings and above only. */
function logCreator(log: Logger | undefined) {
  return () =>
    ({ level, log: entry }: LogEntry) => {
      if (!log) return;
      const { message, ...rest } = entry;
      if (level <= logLevel.ERROR) log.error({ kafka: rest }, message);
      else if (level === logLevel.WARN) log.warn({ kafka: rest }, message);
    };
}

/**
 * The bus over Kafka (kafkajs): topics trades / books / liquidations, key = base asset, JSON
 * values validated on both sides. Producing is batched and never awaited per event; consumers
 * never auto-commit: the caller commits once its work is durable.
 */
export async function createKafkaBus(options: KafkaBusOptions): Promise<Bus> {
  const { log } = options;
  const lingerMs = options.lingerMs ?? 20;
  const maxBatch = options.maxBatch ?? 1_000;
  const maxBuffered = options.maxBuffered ?? 100_000;
  const kafka = new Kafka({
    clientId: options.clientId ?? 'mds',
    brokers: options.brokers,
    logLevel: logLevel.WARN,
    logCreator: logCreator(log),
  });
  const producer = kafka.producer({
    allowAutoTopicCreation: true,
    maxInFlightRequests: 1,
    // murmur2 on the key, as the Java client: one asset always maps to the same partition.
    createPartitioner: Partitioners.DefaultPartitioner,
  });
  await producer.connect();

  const gate = new PublishGate(maxBuffered, log);
  const { stats } = gate;
  let pending: { topic: Topic; message: Message }[] = [];
  // One produce request at a time, so events of one asset keep their order.
  let sending: Promise<void> = Promise.resolve();
  let timer: NodeJS.Timeout | undefined;
  const consumers = new Set<Consumer>();

  function send(): Promise<void> {
    if (timer) clearTimeout(timer);
    timer = undefined;
    sending = sending.then(async () => {
      while (pending.length > 0) {
        const batch = pending.slice(0, maxBatch);
        pending = pending.slice(batch.length);
        const byTopic = new Map<Topic, Message[]>();
        for (const { topic, message } of batch) byTopic.set(topic, [...(byTopic.get(topic) ?? []), message]);
        try {
          await producer.sendBatch({ topicMessages: [...byTopic].map(([topic, messages]) => ({ topic, messages })) });
          stats.published += batch.length;
        } catch (err) {
          // kafkajs has already retried; keep the events (bounded) and try again on the next send.
          pending = batch.concat(pending).slice(0, maxBuffered);
          log?.error({ err, events: batch.length }, 'kafka produce failed; will retry');
          schedule(1_000);
          return;
        }
      }
    });
    return sending;
  }

  async function flush(): Promise<void> {
    // A send already under way may have started before the latest publish: send until nothing is left.
    while (pending.length > 0) {
      const before = pending.length;
      await send();
      if (pending.length >= before) throw new Error(`kafka unavailable: ${pending.length} events not sent yet`);
    }
    await sending;
  }

  function schedule(delayMs: number): void {
    timer ??= setTimeout(() => void send(), delayMs);
  }

  return {
    description: `kafka(${options.brokers.join(',')})`,

    publish(events: readonly MarketEvent[]) {
      for (const event of events) {
        const topic = gate.admit(event, pending.length);
        if (!topic) continue;
        pending.push({
          topic,
          message: { key: event.asset, value: JSON.stringify(event), headers: { 'schema-version': schemaVersion } },
        });
      }
      if (pending.length >= maxBatch) void send();
      else if (pending.length > 0) schedule(lingerMs);
    },

    flush,

    async subscribe<T extends Topic>(opts: SubscribeOptions<T>): Promise<Subscription> {
      const consumer = kafka.consumer({ groupId: opts.group, allowAutoTopicCreation: true });
      consumers.add(consumer);
      consumer.on(consumer.events.GROUP_JOIN, () => opts.onAssignment?.());
      await consumer.connect();
      await consumer.subscribe({ topics: [...opts.topics], fromBeginning: true });
      await consumer.run({
        autoCommit: false,
        eachBatchAutoResolve: true,
        eachBatch: async ({ batch }) => {
          const topic = batch.topic as T;
          const schema = schemaOfTopic[topic];
          const records: BusRecord<T>[] = [];
          for (const message of batch.messages) {
            let parsed: unknown;
            try {
              parsed = JSON.parse(message.value?.toString() ?? '');
            } catch {
              parsed = undefined;
            }
            const result = schema.safeParse(parsed);
            if (!result.success) {
              stats.invalid += 1;
              log?.warn({ topic, partition: batch.partition, offset: message.offset }, 'skipping an invalid message');
              continue;
            }
            records.push({ topic, partition: batch.partition, offset: Number(message.offset), event: result.data } as BusRecord<T>);
          }
          // A rejection makes kafkajs restart the consumer from the last committed offset.
          if (records.length > 0) await opts.onBatch(records);
        },
      });
      return {
        async commit(positions) {
          await consumer.commitOffsets(positions.map((p) => ({ topic: p.topic, partition: p.partition, offset: String(p.offset) })));
        },
        async stop() {
          consumers.delete(consumer);
          await consumer.disconnect();
        },
      };
    },

    stats: () => ({ ...stats }),

    async close() {
      await flush();
      if (timer) clearTimeout(timer);
      await Promise.all([...consumers].map((c) => c.disconnect()));
      consumers.clear();
      await producer.disconnect();
    },
  };
}
