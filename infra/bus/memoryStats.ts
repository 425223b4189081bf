import { topics, type Topic } from '../events.ts';
import type { BusStats, GroupLag, TopicStats } from './bus.ts';
import type { ConsumerGroups, GroupView } from './consumerGroups.ts';
import type { PartitionLog } from './partitionLog.ts';
import type { PublishGate } from './publishGate.ts';
import type { TopicBound } from './topicBound.ts';

/** The parts of the in-process bus its report reads. */
export interface MemoryStatsSource {
  groups: ConsumerGroups;
  logsOf(topic: Topic): readonly PartitionLog[];
  boundOf(topic: Topic): TopicBound;
  gate: PublishGate;
}

/** What the in-process bus reports about itself: counts, what each topic holds, each group's lag. */
export class MemoryStats {
  readonly #source: MemoryStatsSource;

  constructor(source: MemoryStatsSource) {
    this.#source = source;
  }

  /** Records published to `topic` that `group` has not committed, over all partitions. */
  lagOf(group: GroupView, topic: Topic): number {
    let lag = 0;
    for (const log of this.#source.logsOf(topic)) lag += log.end - Math.max(group.committed(topic, log.partition), log.base);
    return lag;
  }

  /** Each group's lag on each topic it reads. */
  lags(): GroupLag[] {
    const out: GroupLag[] = [];
    for (const group of this.#source.groups.all())
      for (const topic of group.topics) out.push({ group: group.name, topic, records: this.lagOf(group, topic), members: group.members });
    return out;
  }

  /** The running group furthest behind on `topic`: the one an operator has to look at. */
  slowestOn(topic: Topic): GroupLag | undefined {
    return this.lags()
      .filter((l) => l.topic === topic && l.members > 0)
      .sort((a, b) => b.records - a.records)[0];
  }

  stats(): BusStats {
    const { gate } = this.#source;
    const byTopic = {} as Record<Topic, TopicStats>;
    for (const topic of topics) {
      const held = this.#source.boundOf(topic).held();
      byTopic[topic] = { ...gate.topicStats(topic), heldRecords: held.records, heldBytes: held.bytes };
    }
    return { ...gate.totals(), topics: byTopic, lags: this.lags() };
  }
}
