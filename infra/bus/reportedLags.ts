import type { Topic } from '../events.ts';
import type { GroupLag } from './bus.ts';

/**
 * The Kafka bus's view of its groups: per group, topic and partition the lag kafkajs reported
 * with the last batch fetched there, and how many members of each group run in this process.
 */
export class ReportedLags {
  readonly #byPartition = new Map<string, { group: string; topic: Topic; lag: number }>();
  readonly #members = new Map<string, number>();

  joined(group: string): void {
    this.#members.set(group, (this.#members.get(group) ?? 0) + 1);
  }

  left(group: string): void {
    this.#members.set(group, (this.#members.get(group) ?? 1) - 1);
  }

  /** The lag reported with a batch fetched from `partition`: it replaces the one before. */
  report(group: string, topic: Topic, partition: number, lag: number): void {
    this.#byPartition.set(`${group}/${topic}/${partition}`, { group, topic, lag });
  }

  /** Per group and topic, the lags last reported summed over partitions. */
  lags(): GroupLag[] {
    const lags = new Map<string, GroupLag>();
    for (const { group, topic, lag } of this.#byPartition.values()) {
      const key = `${group}/${topic}`;
      const l = lags.get(key) ?? { group, topic, records: 0, members: this.#members.get(group) ?? 0 };
      l.records += lag;
      lags.set(key, l);
    }
    return [...lags.values()];
  }
}
