import { schemaOfTopic, topicOf, type MarketEvent, type Topic } from '../events.ts';
import type { Logger } from '../log.ts';
import type { BusStats } from './bus.ts';

const warnEveryMs = 10_000;

/**
 * What every bus adapter checks before it takes an event: the schema, then room in its bounded
 * buffer. Refusals are counted in `stats`, and a full buffer is logged at most every 10 s.
 */
export class PublishGate {
  readonly stats: BusStats = { published: 0, dropped: 0, invalid: 0 };
  readonly #log: Logger | undefined;
  readonly #maxBuffered: number;
  #lastWarning = 0;

  constructor(maxBuffered: number, log?: Logger) {
    this.#maxBuffered = maxBuffered;
    this.#log = log;
  }

  /** The event's topic when the adapter should take it, undefined when it was refused. */
  admit(event: MarketEvent, buffered: number): Topic | undefined {
    const topic = topicOf(event);
    if (!schemaOfTopic[topic].safeParse(event).success) {
      this.stats.invalid += 1;
      return undefined;
    }
    if (buffered >= this.#maxBuffered) {
      this.stats.dropped += 1;
      if (Date.now() - this.#lastWarning > warnEveryMs) {
        this.#lastWarning = Date.now();
        this.#log?.warn({ buffered, dropped: this.stats.dropped }, 'bus buffer full: dropping events until it drains');
      }
      return undefined;
    }
    return topic;
  }
}
