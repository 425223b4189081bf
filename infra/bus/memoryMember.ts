import type { Topic } from '../events.ts';
import type { Logger } from '../log.ts';
import type { BusRecord } from './bus.ts';
import type { PartitionLog } from './partitionLog.ts';

const retryDelayMs = 200;

/** What a member of the in-process bus reads from. */
export interface MemberSource {
  /** The partition logs of `topic`, by partition. */
  logsOf(topic: Topic): readonly PartitionLog[];
  /** The member's group's committed next offset on a partition. */
  committed(topic: Topic, partition: number): number;
}

export interface MemberOptions {
  group: string;
  topics: readonly Topic[];
  onBatch: (records: BusRecord[]) => Promise<void>;
  /** Largest batch handed to one onBatch call. */
  maxBatch: number;
  log?: Logger;
}

/**
 * One subscription of the in-process bus and its delivery loop: it hands its records in batches,
 * per partition from where it was last handed to (at first, its group's commit), and after a
 * failed batch from the group's commit again, 200 ms later. It waits for `wake` when it has
 * handed everything.
 */
export class MemoryMember {
  readonly group: string;
  readonly topics: readonly Topic[];
  readonly #source: MemberSource;
  readonly #options: MemberOptions;
  /** Per `topic/partition`: the next offset to hand. */
  readonly #next = new Map<string, number>();
  #running = true;
  /** Stop once everything in the log has been handed. */
  #draining = false;
  #wake: () => void = () => {};

  constructor(source: MemberSource, options: MemberOptions) {
    this.group = options.group;
    this.topics = options.topics;
    this.#source = source;
    this.#options = options;
  }

  /** Whether this member has been handed the record at `offset` of `log` (since its last failed batch). */
  handed(log: PartitionLog, offset: number): boolean {
    return this.topics.includes(log.topic) && (this.#next.get(`${log.topic}/${log.partition}`) ?? 0) > offset;
  }

  /** Something was published: look again. */
  wake(): void {
    this.#wake();
  }

  /** Stops at once, even in the middle of the log (the bus closes). */
  halt(): void {
    this.#running = false;
    this.#wake();
  }

  /** Stops once everything held has been handed (`run` then resolves). */
  drain(): void {
    this.#draining = true;
    this.#wake();
  }

  async run(): Promise<void> {
    while (this.#running) {
      const batch = this.#nextBatch();
      if (batch.length === 0) {
        if (this.#draining) return;
        await new Promise<void>((resolve) => (this.#wake = resolve));
        continue;
      }
      try {
        await this.#options.onBatch(batch);
      } catch (err) {
        this.#options.log?.warn({ err, group: this.group }, 'consumer batch failed; redelivering from the committed position');
        this.#next.clear();
        await new Promise((r) => setTimeout(r, retryDelayMs));
      }
    }
  }

  /** Up to maxBatch records, topic by topic and partition by partition, from where each was left. */
  #nextBatch(): BusRecord[] {
    const { maxBatch } = this.#options;
    const batch: BusRecord[] = [];
    for (const topic of this.topics) {
      for (const log of this.#source.logsOf(topic)) {
        if (batch.length >= maxBatch) break;
        const key = `${topic}/${log.partition}`;
        const from = Math.max(this.#next.get(key) ?? this.#source.committed(topic, log.partition), log.base);
        const to = Math.min(log.end, from + maxBatch - batch.length);
        for (const record of log.read(from, to)) batch.push(record);
        this.#next.set(key, to);
      }
    }
    return batch;
  }
}
