import { Kafka, Partitioners, logLevel, type Consumer, type LogEntry, type RetryOptions } from 'kafkajs';
import { topics, type Topic } from '../events.ts';
import type { Logger } from '../log.ts';
import type { Bus, BusStats, SubscribeOptions, Subscription, TopicStats } from './bus.ts';
import { KafkaMember } from './kafkaMember.ts';
import { KafkaSender } from './kafkaSender.ts';
import { PublishGate } from './publishGate.ts';
import { ReportedLags } from './reportedLags.ts';

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
  /**
   * How kafkajs retries a request, connecting included, before it gives up: a produce request then
   * counts as failed, and the bus tries it again a second later on its own. kafkajs's default is 5
   * retries from 300 ms, doubling: about 10 s against a broker that is down.
   */
  retry?: Pick<RetryOptions, 'retries' | 'initialRetryTime'>;
}

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
 * values validated on both sides (`kafkaCodec.ts`). Producing is batched and never awaited per
 * event (`KafkaSender`, over a bounded `ProducerBuffer`); each subscription is a consumer of its
 * own that never auto-commits: the caller commits once its work is durable (`KafkaMember`).
 */
export async function createKafkaBus(options: KafkaBusOptions): Promise<Bus> {
  const { log } = options;
  const sessionTimeout = options.sessionTimeoutMs ?? 30_000;
  const kafka = new Kafka({
    clientId: options.clientId ?? 'mds',
    brokers: options.brokers,
    logLevel: logLevel.WARN,
    logCreator: logCreator(log),
    ...(options.retry ? { retry: options.retry } : {}),
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
  const sender = new KafkaSender(producer, gate, {
    lingerMs: options.lingerMs ?? 20,
    maxBatch: options.maxBatch ?? 1_000,
    maxBuffered: options.maxBuffered ?? 100_000,
    log,
  });
  const lags = new ReportedLags();
  const consumers = new Set<Consumer>();
  let invalidReceived = 0;

  function stats(): BusStats {
    const held = sender.held();
    const byTopic = {} as Record<Topic, TopicStats>;
    for (const topic of topics) byTopic[topic] = { ...gate.topicStats(topic), heldRecords: held.get(topic)!.records, heldBytes: held.get(topic)!.bytes };
    const totals = gate.totals();
    return { ...totals, invalid: totals.invalid + invalidReceived, topics: byTopic, lags: lags.lags() };
  }

  return {
    description: `kafka(${options.brokers.join(',')})`,
    membersAcrossProcesses: true,
    publish: (events) => sender.publish(events),
    flush: () => sender.flush(),

    async subscribe<T extends Topic>(opts: SubscribeOptions<T>): Promise<Subscription> {
      const member = new KafkaMember(opts, { kafka, sessionTimeout, lags, invalid: () => void (invalidReceived += 1), log });
      consumers.add(member.consumer);
      await member.start();
      return {
        commit: (positions) => member.commit(positions),
        async stop() {
          consumers.delete(member.consumer);
          await member.stop();
        },
      };
    },

    onRefused: (listener) => gate.onRefused(listener),

    stats,

    async close() {
      try {
        await sender.flush();
      } finally {
        sender.stop();
        await Promise.all([...consumers].map((c) => c.disconnect()));
        consumers.clear();
        await producer.disconnect();
      }
    },
  };
}
