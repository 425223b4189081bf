import { topics, type MarketEvent, type Topic } from '../events.ts';
import type { Logger } from '../log.ts';
import type { Bus, BusRecord, CommitPosition, SubscribeOptions, Subscription } from './bus.ts';
import { PublishGate } from './publishGate.ts';

export interface MemoryBusOptions {
  /** Partitions per topic; events of one asset always land in the same one. */
  partitions?: number;
  /** Records held (not yet committed by every group) before publish starts dropping. */
  maxBuffered?: number;
  /** Largest batch handed to one onBatch call. */
  maxBatch?: number;
  log?: Logger;
}

/** One topic partition: records from `base` on; those every group committed are released. */
interface PartitionLog {
  base: number;
  records: BusRecord[];
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

const retryDelayMs = 200;

/** Stable partition for an asset (FNV-1a), so one partition sees every venue of an asset. */
function partitionOf(asset: string, partitions: number): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < asset.length; i++) h = Math.imul(h ^ asset.charCodeAt(i), 0x01000193);
  return (h >>> 0) % partitions;
}

/**
 * The in-process bus of the embedded default: the same contract as Kafka (offsets, groups,
 * commit, redelivery from the committed position after a failed batch), bounded in memory.
 * It does not survive the process: what the aggregator had not inserted is lost with it.
 */
export function createMemoryBus(options: MemoryBusOptions = {}): Bus {
  const partitions = options.partitions ?? 1;
  const maxBuffered = options.maxBuffered ?? 100_000;
  const maxBatch = options.maxBatch ?? 5_000;
  const log = options.log;
  const logs = new Map<string, PartitionLog>();
  for (const topic of topics) for (let p = 0; p < partitions; p++) logs.set(`${topic}/${p}`, { base: 0, records: [] });
  /** Committed next offset per group and topic/partition. */
  const committed = new Map<string, Map<string, number>>();
  const members = new Set<Member>();
  const gate = new PublishGate(maxBuffered, log);
  const { stats } = gate;
  let held = 0;

  const committedOf = (group: string, tp: string) => committed.get(group)?.get(tp) ?? 0;

  /** Releases records every group has committed. */
  function release(tp: string): void {
    const plog = logs.get(tp)!;
    const groups = [...committed.keys()];
    if (groups.length === 0) return;
    const low = Math.min(...groups.map((g) => committedOf(g, tp)));
    const n = Math.min(low - plog.base, plog.records.length);
    if (n <= 0) return;
    plog.records.splice(0, n);
    plog.base += n;
    held -= n;
  }

  async function runMember(m: Member): Promise<void> {
    while (m.running) {
      const batch: BusRecord[] = [];
      for (const topic of m.topics) {
        for (let p = 0; p < partitions && batch.length < maxBatch; p++) {
          const tp = `${topic}/${p}`;
          const plog = logs.get(tp)!;
          const from = Math.max(m.delivered.get(tp) ?? committedOf(m.group, tp), plog.base);
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

  return {
    description: `memory(${partitions} partition${partitions === 1 ? '' : 's'})`,

    publish(events: readonly MarketEvent[]) {
      for (const event of events) {
        const topic = gate.admit(event, held);
        if (!topic) continue;
        const partition = partitionOf(event.asset, partitions);
        const plog = logs.get(`${topic}/${partition}`)!;
        plog.records.push({ topic, partition, offset: plog.base + plog.records.length, event } as BusRecord);
        held += 1;
        stats.published += 1;
      }
      wakeAll();
    },

    // publish appends synchronously: nothing is ever in flight.
    flush: async () => {},

    async subscribe<T extends Topic>(opts: SubscribeOptions<T>): Promise<Subscription> {
      if (!committed.has(opts.group)) committed.set(opts.group, new Map());
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
      return {
        async commit(positions: readonly CommitPosition[]) {
          const groupCommits = committed.get(opts.group)!;
          for (const { topic, partition, offset } of positions) {
            const tp = `${topic}/${partition}`;
            groupCommits.set(tp, Math.max(groupCommits.get(tp) ?? 0, offset));
            release(tp);
          }
        },
        // The log dies with the process, so a stopping member first takes what is already there.
        async stop() {
          member.draining = true;
          member.wake();
          members.delete(member);
          await loop;
        },
      };
    },

    stats: () => ({ ...stats }),

    async close() {
      const running = [...members];
      for (const m of running) {
        m.running = false;
        m.wake();
      }
      members.clear();
    },
  };
}
