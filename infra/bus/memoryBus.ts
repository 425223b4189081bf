import { topicOf, topics, type MarketEvent, type Topic } from '../events.ts';
import type { Logger } from '../log.ts';
import { BookConflation } from './bookConflation.ts';
import type { Bus, BusRecord, CommitPosition, SubscribeOptions, Subscription } from './bus.ts';
import { ConsumerGroups } from './consumerGroups.ts';
import { LagWarning } from './lagWarning.ts';
import { MemoryMember } from './memoryMember.ts';
import { MemoryStats } from './memoryStats.ts';
import { PartitionLog } from './partitionLog.ts';
import { PublishGate } from './publishGate.ts';
import { TopicBound } from './topicBound.ts';

export interface MemoryBusOptions {
  /** Partitions per topic; events of one asset always land in the same one. */
  partitions?: number;
  /** Records one topic holds (published, not yet committed by every group reading it) before it refuses more. */
  maxRecordsPerTopic?: number;
  /** Estimated heap bytes one topic holds before it refuses more (see `heldBytesOf`). */
  maxBytesPerTopic?: number;
  /** Largest batch handed to one onBatch call. */
  maxBatch?: number;
  log?: Logger;
}

/** Stable partition for an asset (FNV-1a), so one partition sees every venue of an asset. */
function partitionOf(asset: string, partitions: number): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < asset.length; i++) h = Math.imul(h ^ asset.charCodeAt(i), 0x01000193);
  return (h >>> 0) % partitions;
}

/**
 * What a held event costs on the heap, estimated from its shape: a flat event object, plus each
 * book level as a two-number array. Measured on Node 24 with --expose-gc (a 2 x 50-level book is
 * about 10 kB, a trade about 0.4 kB); exact enough to bound memory, cheap enough to run per event.
 */
export function heldBytesOf(event: MarketEvent): number {
  return event.type === 'book' ? 400 + 96 * (event.bids.length + event.asks.length) : 400;
}

/**
 * The in-process bus of the embedded default: the same contract as Kafka (offsets, groups,
 * commit, redelivery from the committed position after a failed batch), bounded in memory. Made of
 * a partition log per topic and partition (`PartitionLog`), a bound per topic (`TopicBound`), the
 * groups with their commits and the release rule (`ConsumerGroups`), a delivery loop per member
 * (`MemoryMember`), the conflation of books (`BookConflation`), and its report (`MemoryStats`,
 * `LagWarning`, `PublishGate`).
 *
 * A record is released once every group reading its topic with a running member has committed
 * it: groups that read other topics never hold it back, and a group whose members all stopped
 * stops holding (when it subscribes again it resumes at its commit or at the oldest record still
 * held). Each topic is bounded by records and by estimated bytes. At the bound a book event
 * replaces the same market's newest book not yet delivered to any reader (only the latest state of
 * a book matters), else it is refused; trades and liquidations are refused. Every refusal is
 * counted per topic in `stats()` and logged at error level with the lagging group; the Kafka
 * adapter has the same contract for its producer buffer. The log does not survive the process:
 * what the aggregator had not inserted is lost with it.
 */
export function createMemoryBus(options: MemoryBusOptions = {}): Bus {
  const partitions = options.partitions ?? 1;
  const maxBatch = options.maxBatch ?? 5_000;
  const { log } = options;
  const logs = new Map(topics.map((topic) => [topic, Array.from({ length: partitions }, (_, p) => new PartitionLog(topic, p))]));
  const bounds = new Map(topics.map((topic) => [topic, new TopicBound(options.maxRecordsPerTopic ?? 100_000, options.maxBytesPerTopic ?? 128 * 1024 * 1024)]));
  const logsOf = (topic: Topic) => logs.get(topic)!;
  const boundOf = (topic: Topic) => bounds.get(topic)!;
  const groups = new ConsumerGroups();
  const members = new Set<MemoryMember>();
  const gate = new PublishGate(log);
  const books = new BookConflation((plog, offset) => [...members].some((m) => m.handed(plog, offset)));
  const report = new MemoryStats({ groups, logsOf, boundOf, gate });
  const lagWarning = new LagWarning(log);

  function release(topic: Topic, partition: number): void {
    const point = groups.releasePoint(topic, partition);
    if (point !== undefined) boundOf(topic).remove(logsOf(topic)[partition]!.releaseBefore(point));
  }

  /** Appends one event, or at the bound conflates it into a held book or refuses it. */
  function take(event: MarketEvent): void {
    // No schema check within the process (a zod parse per event cost more than the rest of the
    // hop): the collectors build only valid events (ingest/normalize.ts); the Kafka adapter checks
    // them where they leave and enter a process.
    const topic = topicOf(event);
    const bytes = heldBytesOf(event);
    const bound = boundOf(topic);
    if (bound.wouldOverflow(bytes)) {
      const delta = event.type === 'book' ? books.replace(event, bytes) : undefined;
      if (delta !== undefined) {
        bound.resize(delta);
        gate.conflated(topic);
        return;
      }
      const slowest = report.slowestOn(topic);
      gate.refuse(topic, { group: slowest?.group, lag: slowest?.records, ...bound.held() }, 1, [event]);
      return;
    }
    const plog = logsOf(topic)[partitionOf(event.asset, partitions)]!;
    const { offset } = plog.append(event, bytes);
    bound.add(bytes);
    if (event.type === 'book') books.appended(event, plog, offset);
    gate.accepted(topic);
  }

  async function subscribe<T extends Topic>(opts: SubscribeOptions<T>): Promise<Subscription> {
    const { group } = opts;
    // A live reader starts at the end of the log, as if it had committed everything held.
    const start = opts.start === 'latest' ? opts.topics.flatMap((topic) => logsOf(topic).map((l) => ({ topic, partition: l.partition, offset: l.end }))) : [];
    groups.join(group, opts.topics, start);
    const source = { logsOf, committed: (topic: Topic, partition: number) => groups.committed(group, topic, partition) };
    const member = new MemoryMember(source, { group, topics: opts.topics, onBatch: opts.onBatch as (records: BusRecord[]) => Promise<void>, maxBatch, log });
    members.add(member);
    opts.onAssignment?.();
    const loop = member.run();
    let left = false;
    const leave = () => {
      if (left) return;
      left = true;
      members.delete(member);
      groups.leave(group);
      // A group that stopped no longer holds records others have committed.
      for (const topic of opts.topics) for (let p = 0; p < partitions; p++) release(topic, p);
    };
    return {
      async commit(positions: readonly CommitPosition[]) {
        for (const { topic, partition, offset } of positions) {
          groups.commit(group, topic, partition, offset);
          release(topic, partition);
        }
      },
      // The log dies with the process, so a stopping member first takes what is already there.
      async stop() {
        member.drain();
        await loop;
        leave();
      },
    };
  }

  return {
    description: `memory(${partitions} partition${partitions === 1 ? '' : 's'})`,
    membersAcrossProcesses: false,

    publish(events: readonly MarketEvent[]) {
      for (const event of events) take(event);
      for (const topic of topics) lagWarning.check(topic, boundOf(topic), () => report.slowestOn(topic));
      for (const m of members) m.wake();
    },

    // publish appends synchronously: nothing is ever in flight.
    flush: async () => {},

    subscribe,

    onRefused: (listener) => gate.onRefused(listener),

    stats: () => report.stats(),

    async close() {
      for (const m of members) m.halt();
      members.clear();
    },
  };
}
