import type { Topic } from '../infra/events.ts';
import type { StoreCalls } from '../infra/store.ts';
import type { OffsetRange } from './sinkSlices.ts';

/**
 * The `sink_intents` table (its migration says why): the offset ranges a sink of a consumer group
 * is about to insert, written before the insert, read by the member that takes a partition over.
 */
export class SinkIntents {
  readonly #store: StoreCalls;
  readonly #group: string;

  constructor(store: StoreCalls, group: string) {
    this.#store = store;
    this.#group = group;
  }

  /** Records the ranges; resolves once the store holds them. */
  async write(ranges: readonly OffsetRange[]): Promise<void> {
    if (ranges.length === 0) return;
    await this.#store.insert(
      'sink_intents',
      ranges.map((r) => ({ consumer_group: this.#group, topic: r.topic, partition: r.partition, first_offset: r.first, last_offset: r.last })),
    );
  }

  /**
   * The ranges of one partition that may have been inserted without being committed: those not
   * wholly before `from`, the partition's first offset delivered since the assignment (the bus
   * delivers again from the committed position). A range that begins before it was committed,
   * so inserted: it is left out. Oldest first, each once.
   */
  async uncommitted(topic: Topic, partition: number, from: number): Promise<OffsetRange[]> {
    const rows = await this.#store.rows<{ first: number; last: number }>(
      `SELECT DISTINCT first_offset AS first, last_offset AS last FROM sink_intents
       WHERE consumer_group = {group:String} AND topic = {topic:String} AND partition = {partition:UInt32}
         AND last_offset >= {from:UInt64} AND first_offset >= {from:UInt64}
       ORDER BY first, last`,
      { group: this.#group, topic, partition, from },
    );
    return rows.map((r) => ({ topic, partition, first: Number(r.first), last: Number(r.last) }));
  }
}
