import { schemaOfTopic, topicOf, topics, type MarketEvent, type Topic } from '../events.ts';
import type { Logger } from '../log.ts';
import type { BusStats, TopicStats } from './bus.ts';

const refusalLogEveryMs = 10_000;

type Counts = Pick<TopicStats, 'published' | 'dropped' | 'conflated'>;

/**
 * What every bus adapter does with an event it is handed: checks its schema (the Kafka adapter, at
 * the process boundary; in-process events are valid by construction), then counts what the adapter did with it (taken, conflated into a newer book, refused at the bound). A refusal is an
 * error: it is logged with its topic and context at most every 10 s per topic, and counted.
 */
export class PublishGate {
  readonly #log: Logger | undefined;
  readonly #counts = new Map<Topic, Counts>(topics.map((t) => [t, { published: 0, dropped: 0, conflated: 0 }]));
  readonly #lastRefusalLog = new Map<Topic, number>();
  #invalid = 0;

  constructor(log?: Logger) {
    this.#log = log;
  }

  /** The event's topic when it passes its schema, undefined (and counted) when it does not. */
  validate(event: MarketEvent): Topic | undefined {
    const topic = topicOf(event);
    if (!schemaOfTopic[topic].safeParse(event).success) {
      this.#invalid += 1;
      return undefined;
    }
    return topic;
  }

  accepted(topic: Topic, n = 1): void {
    this.#counts.get(topic)!.published += n;
  }

  conflated(topic: Topic): void {
    this.#counts.get(topic)!.conflated += 1;
  }

  readonly #refusalListeners = new Set<(events: readonly MarketEvent[]) => void>();

  /** Calls `listener` with the events refused from now on (where the adapter still has them). */
  onRefused(listener: (events: readonly MarketEvent[]) => void): () => void {
    this.#refusalListeners.add(listener);
    return () => void this.#refusalListeners.delete(listener);
  }

  /**
   * Counts `n` events of `topic` refused at the adapter's bound, and says so loudly; `events` go to
   * the refusal listeners. Counted first, and a listener that throws is logged, not thrown: the
   * adapter calls this from its own send path, which must go on (a throw there stopped the Kafka
   * sender for good, with the refusal not counted).
   */
  refuse(topic: Topic, context: Record<string, unknown>, n = 1, events: readonly MarketEvent[] = []): void {
    const counts = this.#counts.get(topic)!;
    counts.dropped += n;
    if (events.length > 0) this.#tellListeners(topic, events);
    const now = Date.now();
    if (now - (this.#lastRefusalLog.get(topic) ?? 0) < refusalLogEveryMs) return;
    this.#lastRefusalLog.set(topic, now);
    this.#log?.error({ topic, dropped: counts.dropped, ...context }, 'bus full: events refused and lost');
  }

  #tellListeners(topic: Topic, events: readonly MarketEvent[]): void {
    for (const listener of this.#refusalListeners) {
      try {
        listener(events);
      } catch (err) {
        this.#log?.error({ topic, events: events.length, err }, 'a bus refusal listener failed: the refused events are counted as lost');
      }
    }
  }

  topicStats(topic: Topic): Counts {
    return { ...this.#counts.get(topic)! };
  }

  totals(): Pick<BusStats, 'published' | 'dropped' | 'conflated' | 'invalid'> {
    let published = 0;
    let dropped = 0;
    let conflated = 0;
    for (const c of this.#counts.values()) {
      published += c.published;
      dropped += c.dropped;
      conflated += c.conflated;
    }
    return { published, dropped, conflated, invalid: this.#invalid };
  }
}
