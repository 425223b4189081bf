import type { EventOfTopic, MarketEvent, Topic } from '../events.ts';

/** One event as read back from the bus, with its position in the log. */
export interface BusRecord<T extends Topic = Topic> {
  topic: T;
  partition: number;
  /** Position in the partition; the next record has offset + 1. */
  offset: number;
  event: EventOfTopic[T];
}

/** Where a consumer has durably got to: `offset` is the next record to read. */
export interface CommitPosition {
  topic: Topic;
  partition: number;
  offset: number;
}

export interface SubscribeOptions<T extends Topic> {
  /** Consumer group: every group reads every record; members of a group share partitions. */
  group: string;
  topics: readonly T[];
  /**
   * Called with records in offset order per partition. Resolving means "received", not
   * "durable": only `Subscription.commit` moves the group's position. A rejection makes the
   * bus deliver again from the last committed position.
   */
  onBatch: (records: BusRecord<T>[]) => Promise<void>;
  /**
   * Called whenever this member's partitions change (also at the start). Anything received and
   * not committed before will be delivered again, so consumers drop their uncommitted buffers.
   */
  onAssignment?: () => void;
  /**
   * Where a group with no committed position starts: at the oldest record the bus holds (default,
   * what durable consumers need) or at the records published after it joined (`latest`: live
   * readers, such as the API's stream, which must not replay the topic's retention).
   */
  start?: 'earliest' | 'latest';
}

export interface Subscription {
  commit(positions: readonly CommitPosition[]): Promise<void>;
  stop(): Promise<void>;
}

/** What one topic has taken, conflated and refused, and what it holds now. */
export interface TopicStats {
  published: number;
  /** Events refused at the adapter's bound: lost, and logged at error level. */
  dropped: number;
  /** Book events that replaced an older book of the same market still waiting to be read. */
  conflated: number;
  /** Records held: not yet released (in-process) or not yet sent (Kafka producer). */
  heldRecords: number;
  /** Estimated heap bytes of those records. */
  heldBytes: number;
}

/** How far a consumer group is behind on a topic. */
export interface GroupLag {
  group: string;
  topic: Topic;
  /** Records published and not yet committed by the group (Kafka: at its last fetched batch). */
  records: number;
  /** Members of the group in this process. */
  members: number;
}

export interface BusStats {
  published: number;
  /** Events refused because a bounded buffer was full (never grows without bound). */
  dropped: number;
  conflated: number;
  /** Events refused because they failed the schema check (Kafka: where events leave and enter a process). */
  invalid: number;
  topics: Record<Topic, TopicStats>;
  lags: GroupLag[];
}

/**
 * The message bus between collectors and aggregators. Two adapters: in-process (default)
 * and Kafka. Kafka validates events on publish and on receive (a process boundary; in-process,
 * the collectors build only valid events), keys them by base asset, and sends them in batches;
 * `close` flushes what is buffered.
 */
export interface Bus {
  /** Short description for logs, e.g. `memory` or `kafka(127.0.0.1:9092)`. */
  readonly description: string;
  /**
   * Whether members of one consumer group may run in other processes (Kafka: true). Then records
   * a member received but did not commit are delivered to a member in another process after a
   * rebalance, while the first one may still be writing them somewhere (a member that lost its
   * partitions, or died with a write on its way): a consumer that needs exactly-once storage must
   * not trust what the store held when its partitions were assigned. False for the in-process bus:
   * its members live and die with this process, so what one received never goes to a member
   * elsewhere while the first may still be writing it.
   */
  readonly membersAcrossProcesses: boolean;
  /** Non-blocking: queues events for the next batch. */
  publish(events: readonly MarketEvent[]): void;
  /**
   * Resolves when everything published so far has been handed to the log, or refused and counted
   * (`dropped`); rejects while some of it cannot be sent (Kafka: the broker unreachable), whatever
   * was published after the call.
   */
  flush(): Promise<void>;
  subscribe<T extends Topic>(options: SubscribeOptions<T>): Promise<Subscription>;
  /**
   * Calls `listener` with events the bus refused (its bound reached, Kafka unreachable), as it
   * refuses them: a collector marks their markets' trades as missed and recovers them. Returns the
   * remover.
   */
  onRefused(listener: (events: readonly MarketEvent[]) => void): () => void;
  stats(): BusStats;
  /** Flushes, stops every subscription and releases connections. */
  close(): Promise<void>;
}

/** The positions to commit once `records` are durable: per partition, the offset after the last one. */
export function commitPositionsAfter(records: readonly BusRecord[]): CommitPosition[] {
  const next = new Map<string, CommitPosition>();
  for (const { topic, partition, offset } of records) {
    const key = `${topic}/${partition}`;
    if ((next.get(key)?.offset ?? -1) < offset + 1) next.set(key, { topic, partition, offset: offset + 1 });
  }
  return [...next.values()];
}
