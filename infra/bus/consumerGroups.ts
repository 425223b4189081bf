import type { Topic } from '../events.ts';

/** One group of the in-process bus: what it reads, where it committed, how many members run. */
export interface GroupView {
  readonly name: string;
  readonly topics: ReadonlySet<Topic>;
  readonly members: number;
  /** The group's committed next offset on a partition (0 before its first commit there). */
  committed(topic: Topic, partition: number): number;
}

interface Group {
  topics: Set<Topic>;
  /** Committed next offset per `topic/partition`. */
  committed: Map<string, number>;
  members: number;
}

const keyOf = (topic: Topic, partition: number) => `${topic}/${partition}`;

/**
 * The consumer groups of the in-process bus: their membership, their committed offsets, and the
 * rule that says which records may be released (`releasePoint`). A group outlives its members:
 * one that comes back resumes at its commit.
 */
export class ConsumerGroups {
  readonly #groups = new Map<string, Group>();

  /**
   * A member joins `name` to read `topics`. A group new here starts at `start` on the partitions
   * it names (a live reader: the end of the log), elsewhere at its first held record.
   */
  join(name: string, topics: readonly Topic[], start: readonly { topic: Topic; partition: number; offset: number }[] = []): void {
    let group = this.#groups.get(name);
    if (!group) {
      group = { topics: new Set(), committed: new Map(), members: 0 };
      this.#groups.set(name, group);
      for (const { topic, partition, offset } of start) group.committed.set(keyOf(topic, partition), offset);
    }
    for (const topic of topics) group.topics.add(topic);
    group.members += 1;
  }

  /** A member of `name` stopped. */
  leave(name: string): void {
    this.#groups.get(name)!.members -= 1;
  }

  /** Moves the group's position on a partition forward to `offset`; never back. */
  commit(name: string, topic: Topic, partition: number, offset: number): void {
    const committed = this.#groups.get(name)!.committed;
    const key = keyOf(topic, partition);
    committed.set(key, Math.max(committed.get(key) ?? 0, offset));
  }

  committed(name: string, topic: Topic, partition: number): number {
    return this.#groups.get(name)!.committed.get(keyOf(topic, partition)) ?? 0;
  }

  /**
   * The release rule: the records of a partition before the returned offset may be released, as
   * every group reading its topic with a running member has committed them. Groups that read other
   * topics never hold a record back, nor does a group whose members all stopped. Undefined when no
   * group holds the topic: then nothing is released, and the records wait for the next reader.
   */
  releasePoint(topic: Topic, partition: number): number | undefined {
    let point: number | undefined;
    for (const group of this.#groups.values()) {
      if (group.members === 0 || !group.topics.has(topic)) continue;
      const committed = group.committed.get(keyOf(topic, partition)) ?? 0;
      point = point === undefined ? committed : Math.min(point, committed);
    }
    return point;
  }

  /** Every group, in the order they were first joined. */
  *all(): IterableIterator<GroupView> {
    for (const [name, group] of this.#groups)
      yield { name, topics: group.topics, members: group.members, committed: (topic, partition) => group.committed.get(keyOf(topic, partition)) ?? 0 };
  }
}
