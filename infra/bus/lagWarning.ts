import type { Topic } from '../events.ts';
import type { Logger } from '../log.ts';
import type { GroupLag } from './bus.ts';
import type { TopicBound } from './topicBound.ts';

/** A topic at this share of its bound is reported as lagging. */
const warnShare = 0.5;
const warnEveryMs = 60_000;

/**
 * The in-process bus's early word before it refuses events: a topic past half its bound is logged
 * at error level with the group furthest behind, at most once a minute whatever the topic.
 */
export class LagWarning {
  readonly #log: Logger | undefined;
  #last = 0;

  constructor(log?: Logger) {
    this.#log = log;
  }

  /** Warns when `topic` holds half its bound or more; `slowest` names the group to look at. */
  check(topic: Topic, bound: TopicBound, slowest: () => GroupLag | undefined): void {
    if (!bound.holdsShare(warnShare)) return;
    if (Date.now() - this.#last < warnEveryMs) return;
    this.#last = Date.now();
    const group = slowest();
    const held = bound.held();
    this.#log?.error(
      { topic, group: group?.group, lag: group?.records, heldRecords: held.records, heldBytes: held.bytes, maxRecords: bound.maxRecords, maxBytes: bound.maxBytes },
      'bus consumer falling behind: the topic is past half its bound',
    );
  }
}
