import { topicOf, topics, type BookEvent, type MarketEvent, type Topic } from '../events.ts';
import type { Logger } from '../log.ts';
import type { Bus, BusRecord, BusStats, CommitPosition, GroupLag, SubscribeOptions, Subscription, TopicStats } from './bus.ts';
import { PublishGate } from './publishGate.ts';

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

/** One topic partition: records from `base` on; those every reading group committed are released. */
interface PartitionLog {
  base: number;
  records: BusRecord[];
  /** Estimated bytes of each record, parallel to `records`. */
  sizes: number[];
}

interface Member {
  group: string;
  topics: readonly Topic[];
  /** Per topic/partition: next offset to deliver. */
  delivered: Map<string, number>;
  onBatch: (records: BusRecord[]) => Promise<void>;
  running: boolean;
  /** Stop once everything in the log has been delivered. */
  draining: boolean;
  wake: () => void;
}

interface Group {
  topics: Set<Topic>;
  /** Committed next offset per topic/partition. */
  committed: Map<string, number>;
  members: number;
}

const retryDelayMs = 200;
/** A topic above this share of its bound is reported as lagging (error log, at most once a minute). */
const lagWarnShare = 0.5;
const lagWarnEveryMs = 60_000;

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

const bookKey = (e: BookEvent) => `${e.venue}\u0000${e.market}`;

/**
 * The in-process bus of the embedded default: the same contract as Kafka (offsets, groups,
 * commit, redelivery from the committed position after a failed batch), bounded in memory.
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
  const maxRecords = options.maxRecordsPerTopic ?? 100_000;
  const maxBytes = options.maxBytesPerTopic ?? 128 * 1024 * 1024;
  const maxBatch = options.maxBatch ?? 5_000;
  const log = options.log;
  const logs = new Map<string, PartitionLog>();
  for (const topic of topics) for (let p = 0; p < partitions; p++) logs.set(`${topic}/${p}`, { base: 0, records: [], sizes: [] });
  const held = new Map<Topic, { records: number; bytes: number }>(topics.map((t) => [t, { records: 0, bytes: 0 }]));
  const groups = new Map<string, Group>();
  const members = new Set<Member>();
  const gate = new PublishGate(log);
  /** Per market, where its newest held book record is: the one a newer book may replace. */
  const newestBook = new Map<string, { tp: string; offset: number }>();
  let lastLagWarning = 0;

  const committedOf = (group: Group, tp: string) => group.committed.get(tp) ?? 0;
  /** The groups whose commits hold records of `topic`. */
  const readersOf = (topic: Topic) => [...groups.values()].filter((g) => g.members > 0 && g.topics.has(topic));

  function release(topic: Topic, tp: string): void {
    const plog = logs.get(tp)!;
    const readers = readersOf(topic);
    if (readers.length === 0) return;
    const low = Math.min(...readers.map((g) => committedOf(g, tp)));
    const n = Math.min(low - plog.base, plog.records.length);
    if (n <= 0) return;
    plog.records.splice(0, n);
    const freed = plog.sizes.splice(0, n).reduce((a, b) => a + b, 0);
    plog.base += n;
    const h = held.get(topic)!;
    h.records -= n;
    h.bytes -= freed;
  }

  /** Records published to `topic` that `group` has not committed, over all partitions. */
  function lagOf(group: Group, topic: Topic): number {
    let lag = 0;
    for (let p = 0; p < partitions; p++) {
      const tp = `${topic}/${p}`;
      const plog = logs.get(tp)!;
      lag += plog.base + plog.records.length - Math.max(committedOf(group, tp), plog.base);
    }
    return lag;
  }

  function lags(): GroupLag[] {
    const out: GroupLag[] = [];
    for (const [name, g] of groups) for (const topic of g.topics) out.push({ group: name, topic, records: lagOf(g, topic), members: g.members });
    return out;
  }

  /** The reading group furthest behind on `topic`: the one an operator has to look at. */
  function slowestOn(topic: Topic): GroupLag | undefined {
    return lags()
      .filter((l) => l.topic === topic && l.members > 0)
      .sort((a, b) => b.records - a.records)[0];
  }

  function isFull(topic: Topic, bytes: number): boolean {
    const h = held.get(topic)!;
    return h.records + 1 > maxRecords || h.bytes + bytes > maxBytes;
  }

  /** Puts `event` in place of the market's newest held book when no reader has been handed that one yet. */
  function conflate(event: BookEvent, bytes: number): boolean {
    const at = newestBook.get(bookKey(event));
    if (!at) return false;
    const plog = logs.get(at.tp)!;
    const i = at.offset - plog.base;
    if (i < 0) return false;
    for (const m of members) if (m.topics.includes('books') && (m.delivered.get(at.tp) ?? 0) > at.offset) return false;
    const record = plog.records[i]!;
    record.event = event;
    held.get('books')!.bytes += bytes - plog.sizes[i]!;
    plog.sizes[i] = bytes;
    return true;
  }

  function warnIfLagging(topic: Topic): void {
    const h = held.get(topic)!;
    if (h.records < maxRecords * lagWarnShare && h.bytes < maxBytes * lagWarnShare) return;
    if (Date.now() - lastLagWarning < lagWarnEveryMs) return;
    lastLagWarning = Date.now();
    const slowest = slowestOn(topic);
    log?.error({ topic, group: slowest?.group, lag: slowest?.records, heldRecords: h.records, heldBytes: h.bytes, maxRecords, maxBytes }, 'bus consumer falling behind: the topic is past half its bound');
  }

  async function runMember(m: Member): Promise<void> {
    while (m.running) {
      const batch: BusRecord[] = [];
      const group = groups.get(m.group)!;
      for (const topic of m.topics) {
        for (let p = 0; p < partitions && batch.length < maxBatch; p++) {
          const tp = `${topic}/${p}`;
          const plog = logs.get(tp)!;
          const from = Math.max(m.delivered.get(tp) ?? committedOf(group, tp), plog.base);
          const end = Math.min(plog.base + plog.records.length, from + maxBatch - batch.length);
          for (let o = from; o < end; o++) batch.push(plog.records[o - plog.base]!);
          m.delivered.set(tp, end);
        }
      }
      if (batch.length === 0) {
        if (m.draining) return;
        await new Promise<void>((resolve) => (m.wake = resolve));
        continue;
      }
      try {
        await m.onBatch(batch);
      } catch (err) {
        log?.warn({ err, group: m.group }, 'consumer batch failed; redelivering from the committed position');
        m.delivered.clear();
        await new Promise((r) => setTimeout(r, retryDelayMs));
      }
    }
  }

  const wakeAll = () => {
    for (const m of members) m.wake();
  };

  function stats(): BusStats {
    const byTopic = {} as Record<Topic, TopicStats>;
    for (const topic of topics) {
      const h = held.get(topic)!;
      byTopic[topic] = { ...gate.topicStats(topic), heldRecords: h.records, heldBytes: h.bytes };
    }
    return { ...gate.totals(), topics: byTopic, lags: lags() };
  }

  return {
    description: `memory(${partitions} partition${partitions === 1 ? '' : 's'})`,

    publish(events: readonly MarketEvent[]) {
      for (const event of events) {
        // No schema check within the process (a zod parse per event cost more than the rest of the
        // hop): the collectors build only valid events (ingest/normalize.ts); the Kafka adapter checks
        // them where they leave and enter a process.
        const topic = topicOf(event);
        const bytes = heldBytesOf(event);
        if (isFull(topic, bytes)) {
          if (event.type === 'book' && conflate(event, bytes)) {
            gate.conflated(topic);
            continue;
          }
          const slowest = slowestOn(topic);
          gate.refuse(topic, { group: slowest?.group, lag: slowest?.records, ...held.get(topic)! });
          continue;
        }
        const partition = partitionOf(event.asset, partitions);
        const tp = `${topic}/${partition}`;
        const plog = logs.get(tp)!;
        const offset = plog.base + plog.records.length;
        plog.records.push({ topic, partition, offset, event } as BusRecord);
        plog.sizes.push(bytes);
        const h = held.get(topic)!;
        h.records += 1;
        h.bytes += bytes;
        if (event.type === 'book') newestBook.set(bookKey(event), { tp, offset });
        gate.accepted(topic);
      }
      for (const topic of topics) warnIfLagging(topic);
      wakeAll();
    },

    // publish appends synchronously: nothing is ever in flight.
    flush: async () => {},

    async subscribe<T extends Topic>(opts: SubscribeOptions<T>): Promise<Subscription> {
      let group = groups.get(opts.group);
      if (!group) {
        groups.set(opts.group, (group = { topics: new Set(), committed: new Map(), members: 0 }));
        // A live reader starts at the end of the log, as if it had committed everything held.
        if (opts.start === 'latest') {
          for (const [tp, plog] of logs) if (opts.topics.some((t) => tp.startsWith(`${t}/`))) group.committed.set(tp, plog.base + plog.records.length);
        }
      }
      for (const t of opts.topics) group.topics.add(t);
      group.members += 1;
      const member: Member = {
        group: opts.group,
        topics: opts.topics,
        delivered: new Map(),
        onBatch: opts.onBatch as (records: BusRecord[]) => Promise<void>,
        running: true,
        draining: false,
        wake: () => {},
      };
      members.add(member);
      opts.onAssignment?.();
      const loop = runMember(member);
      const g = group;
      let left = false;
      const leave = () => {
        if (left) return;
        left = true;
        members.delete(member);
        g.members -= 1;
        // A group that stopped no longer holds records others have committed.
        for (const topic of opts.topics) for (let p = 0; p < partitions; p++) release(topic, `${topic}/${p}`);
      };
      return {
        async commit(positions: readonly CommitPosition[]) {
          for (const { topic, partition, offset } of positions) {
            const tp = `${topic}/${partition}`;
            g.committed.set(tp, Math.max(g.committed.get(tp) ?? 0, offset));
            release(topic, tp);
          }
        },
        // The log dies with the process, so a stopping member first takes what is already there.
        async stop() {
          member.draining = true;
          member.wake();
          await loop;
          leave();
        },
      };
    },

    stats,

    async close() {
      for (const m of members) {
        m.running = false;
        m.wake();
      }
      members.clear();
    },
  };
}
