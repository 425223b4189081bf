import type { Topic } from '../events.ts';
import type { CommitPosition } from './bus.ts';

interface Span {
  topic: Topic;
  partition: number;
  /** The first offset delivered since the last commit (or since the assignment). */
  from: number;
  /** The offset after the last one delivered. */
  next: number;
}

/**
 * What a Kafka member was handed and has not committed, per partition: where a failed batch must
 * rewind each of them so the group's next delivery starts at its committed position (Kafka itself
 * keeps reading on from its fetch position). Forgotten on a new assignment: a partition that came
 * back may have been committed further by another member meanwhile.
 */
export class UncommittedSpans {
  readonly #spans = new Map<string, Span>();

  /** A batch of `partition` from `first` up to, not including, `next` was delivered. */
  delivered(topic: Topic, partition: number, first: number, next: number): void {
    const span = this.#spans.get(`${topic}/${partition}`);
    if (span) span.next = next;
    else this.#spans.set(`${topic}/${partition}`, { topic, partition, from: first, next });
  }

  /** Positions were committed: what precedes them needs no rewind. */
  committed(positions: readonly CommitPosition[]): void {
    for (const p of positions) {
      const key = `${p.topic}/${p.partition}`;
      const span = this.#spans.get(key);
      if (!span) continue;
      if (p.offset >= span.next) this.#spans.delete(key);
      else span.from = Math.max(span.from, p.offset);
    }
  }

  /** Where each partition delivered since its last commit starts again; forgets them all. */
  rewind(): CommitPosition[] {
    const positions = [...this.#spans.values()].map(({ topic, partition, from }) => ({ topic, partition, offset: from }));
    this.#spans.clear();
    return positions;
  }

  /** Partitions were (re)assigned: nothing delivered before counts any more. */
  clear(): void {
    this.#spans.clear();
  }
}
