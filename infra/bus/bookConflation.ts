import type { BookEvent } from '../events.ts';
import type { PartitionLog } from './partitionLog.ts';

/** Whether some reader has been handed the record at `offset` of `log`: then it must not change. */
export type HandedCheck = (log: PartitionLog, offset: number) => boolean;

const marketOf = (e: BookEvent) => `${e.venue}\u0000${e.market}`;

/**
 * Conflation of books at the in-process bus's bound: only the latest state of a book matters, so a
 * book may take the place of its market's newest book still held, as long as no reader has been
 * handed that one yet (what a reader was handed never changes). Books of other markets, and a
 * market's older books, are never replaced.
 */
export class BookConflation {
  /** Per market, where its newest appended book is (it may have been released since). */
  readonly #newest = new Map<string, { log: PartitionLog; offset: number }>();
  readonly #handed: HandedCheck;

  constructor(handed: HandedCheck) {
    this.#handed = handed;
  }

  /** Notes the book just appended to `log` at `offset` as its market's newest. */
  appended(event: BookEvent, log: PartitionLog, offset: number): void {
    this.#newest.set(marketOf(event), { log, offset });
  }

  /**
   * Puts `event` in place of its market's newest book when that one is still held and no reader
   * has been handed it, and returns the change in held bytes; undefined when there is none to
   * replace (the event is then refused).
   */
  replace(event: BookEvent, bytes: number): number | undefined {
    const at = this.#newest.get(marketOf(event));
    if (!at || !at.log.holds(at.offset) || this.#handed(at.log, at.offset)) return undefined;
    return at.log.replace(at.offset, event, bytes);
  }
}
