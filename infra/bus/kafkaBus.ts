import { Kafka, Partitioners, logLevel, type Consumer, type LogEntry, type Message } from 'kafkajs';
import { schemaOfTopic, topics, type MarketEvent, type Topic } from '../events.ts';
import type { Logger } from '../log.ts';
import type { Bus, BusRecord, BusStats, GroupLag, SubscribeOptions, Subscription, TopicStats } from './bus.ts';
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
  /**
   * Consumer group session timeout (ms; kafkajs default 30 s). A member that stopped without
   * leaving is replaced after it; brokers refuse values below group.min.session.timeout.ms (6 s).
   */
  sessionTimeoutMs?: number;
}

const schemaVersion = '1';
const retryDelayMs = 200;
const produceRetryMs = 1_000;

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
  const sessionTimeout = options.sessionTimeoutMs ?? 30_000;
  const kafka = new Kafka({
    clientId: options.clientId ?? 'mds',
    brokers: options.brokers,
    logLevel: logLevel.WARN,
    logCreator: logCreator(log),
  });
  // Topics are created on first use where the broker allows it (kafkajs asks by default); where
  // it does not, an operator creates trades / books / liquidations beforehand.
  const producer = kafka.producer({
    maxInFlightRequests: 1,
    // murmur2 on the key, as the Java client: one asset always maps to the same partition.
    createPartitioner: Partitioners.DefaultPartitioner,
  });
  await producer.connect();

  const gate = new PublishGate(log);
  /** Per group, topic and partition: the lag kafkajs reported with the last batch fetched. */
  const lagByPartition = new Map<string, { group: string; topic: Topic; partition: number; lag: number }>();
  const membersOf = new Map<string, number>();
  /** Events waiting to be sent, oldest first; `seq` numbers them in the order publish took them. */
  let pending: { seq: number; topic: Topic; message: Message }[] = [];
  /** The events of the produce request under way: taken from `pending`, not sent yet, so still held. */
  let inFlight: typeof pending = [];
  /** Events taken by publish so far. */
  let accepted = 0;
  let lastSendFailed = false;
  // One produce request at a time, so events of one asset keep their order.
  let sending: Promise<void> = Promise.resolve();
  let timer: NodeJS.Timeout | undefined;
  const consumers = new Set<Consumer>();

  function send(): Promise<void> {
    if (timer) clearTimeout(timer);
    timer = undefined;
    sending = sending.then(async () => {
      while (pending.length > 0) {
        const batch = pending.splice(0, maxBatch);
        inFlight = batch;
        const byTopic = new Map<Topic, Message[]>();
        for (const { topic, message } of batch) {
          const messages = byTopic.get(topic);
          if (messages) messages.push(message);
          else byTopic.set(topic, [message]);
        }
        try {
          await producer.sendBatch({ topicMessages: [...byTopic].map(([topic, messages]) => ({ topic, messages })) });
          for (const [topic, messages] of byTopic) gate.accepted(topic, messages.length);
          lastSendFailed = false;
        } catch (err) {
          // kafkajs has already retried; keep the events in front (bounded) and try again later.
          lastSendFailed = true;
          // The newest are refused first: what a flush waits for is never refused for what came after it.
          pending = batch.concat(pending);
          for (const { topic } of pending.splice(maxBuffered)) gate.refuse(topic, { reason: 'kafka unavailable', pending: maxBuffered });
          log?.error({ err, events: batch.length }, 'kafka produce failed; will retry');
          schedule(produceRetryMs);
          return;
        } finally {
          inFlight = [];
        }
      }
    });
    return sending;
  }

  /** How many of the first `upTo` events publish took are still held (neither sent nor refused). */
  function heldUpTo(upTo: number): number {
    let held = 0;
    for (const { seq } of inFlight) if (seq <= upTo) held += 1;
    for (const { seq } of pending) if (seq <= upTo) held += 1;
    return held;
  }

  async function flush(): Promise<void> {
    const target = accepted;
    // Events published while a send is under way join a later request: send until ours are out.
    while (heldUpTo(target) > 0) {
      await send();
      const held = heldUpTo(target);
      if (lastSendFailed && held > 0) throw new Error(`kafka unavailable: ${held} events not sent yet`);
    }
  }

  let invalidReceived = 0;

  function stats(): BusStats {
    const held = new Map<Topic, { records: number; bytes: number }>(topics.map((t) => [t, { records: 0, bytes: 0 }]));
    for (const { topic, message } of [...inFlight, ...pending]) {
      const h = held.get(topic)!;
      h.records += 1;
      h.bytes += (message.value as string).length;
    }
    const byTopic = {} as Record<Topic, TopicStats>;
    for (const topic of topics) byTopic[topic] = { ...gate.topicStats(topic), heldRecords: held.get(topic)!.records, heldBytes: held.get(topic)!.bytes };
    const lags = new Map<string, GroupLag>();
    for (const { group, topic, lag } of lagByPartition.values()) {
      const key = `${group}/${topic}`;
      const l = lags.get(key) ?? { group, topic, records: 0, members: membersOf.get(group) ?? 0 };
      l.records += lag;
      lags.set(key, l);
    }
    const totals = gate.totals();
    return { ...totals, invalid: totals.invalid + invalidReceived, topics: byTopic, lags: [...lags.values()] };
  }

  function schedule(delayMs: number): void {
    timer ??= setTimeout(() => void send(), delayMs);
  }

  return {
    description: `kafka(${options.brokers.join(',')})`,

    publish(events: readonly MarketEvent[]) {
      for (const event of events) {
        const topic = gate.validate(event);
        if (!topic) continue;
        if (pending.length >= maxBuffered) {
          gate.refuse(topic, { reason: 'producer buffer full', pending: pending.length });
          continue;
        }
        accepted += 1;
        pending.push({
          seq: accepted,
          topic,
          message: { key: event.asset, value: JSON.stringify(event), headers: { 'schema-version': schemaVersion } },
        });
      }
      if (pending.length >= maxBatch) void send();
      else if (pending.length > 0) schedule(lingerMs);
    },

    flush,

    async subscribe<T extends Topic>(opts: SubscribeOptions<T>): Promise<Subscription> {
      const consumer = kafka.consumer({
        groupId: opts.group,
        sessionTimeout,
        heartbeatInterval: Math.min(3_000, Math.floor(sessionTimeout / 3)),
        // A broker answers a fetch as soon as it has bytes, but librdkafka's mock cluster (the tests'
        // and bench's broker) holds every fetch for the whole wait: 1 s added 0.5 s median, 1 s at p99,
        // to every event's trip. 100 ms costs an idle consumer 10 fetches a second, and bounds stop().
        maxWaitTimeInMs: 100,
      });
      /** Per topic/partition: the first offset delivered since the last commit, and the one after the last. */
      const uncommitted = new Map<string, { topic: Topic; partition: number; from: number; next: number }>();
      consumers.add(consumer);
      membersOf.set(opts.group, (membersOf.get(opts.group) ?? 0) + 1);
      consumer.on(consumer.events.GROUP_JOIN, () => {
        uncommitted.clear();
        opts.onAssignment?.();
      });
      await consumer.connect();
      await consumer.subscribe({ topics: [...opts.topics], fromBeginning: opts.start !== 'latest' });
      await consumer.run({
        autoCommit: false,
        eachBatchAutoResolve: true,
        eachBatch: async ({ batch, heartbeat }) => {
          const topic = batch.topic as T;
          const { partition } = batch;
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
              invalidReceived += 1;
              log?.warn({ topic, partition, offset: message.offset }, 'skipping an invalid message');
              continue;
            }
            records.push({ topic, partition, offset: Number(message.offset), event: result.data } as BusRecord<T>);
          }
          lagByPartition.set(`${opts.group}/${topic}/${partition}`, { group: opts.group, topic, partition, lag: Number(batch.offsetLag()) });
          const first = batch.messages[0];
          if (!first) return;
          const key = `${topic}/${partition}`;
          const span = uncommitted.get(key);
          const next = Number(batch.lastOffset()) + 1;
          if (span) span.next = next;
          else uncommitted.set(key, { topic, partition, from: Number(first.offset), next });
          if (records.length === 0) return;
          // A consumer that holds delivery (e.g. while its store is down) must stay in the group.
          const beat = setInterval(() => void heartbeat().catch(() => {}), 1_000);
          try {
            await opts.onBatch(records);
          } catch (err) {
            // Redeliver from the committed position: rewind every partition delivered since its last commit.
            log?.warn({ err, group: opts.group }, 'consumer batch failed; redelivering from the committed position');
            for (const u of uncommitted.values()) consumer.seek({ topic: u.topic, partition: u.partition, offset: String(u.from) });
            uncommitted.clear();
            await new Promise((r) => setTimeout(r, retryDelayMs));
          } finally {
            clearInterval(beat);
          }
        },
      });
      return {
        async commit(positions) {
          await consumer.commitOffsets(positions.map((p) => ({ topic: p.topic, partition: p.partition, offset: String(p.offset) })));
          for (const p of positions) {
            const key = `${p.topic}/${p.partition}`;
            const span = uncommitted.get(key);
            if (!span) continue;
            if (p.offset >= span.next) uncommitted.delete(key);
            else span.from = Math.max(span.from, p.offset);
          }
        },
        async stop() {
          membersOf.set(opts.group, (membersOf.get(opts.group) ?? 1) - 1);
          consumers.delete(consumer);
          await consumer.disconnect();
        },
      };
    },

    stats,

    async close() {
      try {
        await flush();
      } finally {
        if (timer) clearTimeout(timer);
        await Promise.all([...consumers].map((c) => c.disconnect()));
        consumers.clear();
        await producer.disconnect();
      }
    },
  };
}
