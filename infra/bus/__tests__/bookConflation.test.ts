// Conflation of books at the in-process bus's bound, on its own: which held book a newer one may
// replace, and what it changes in the log.
import { expect, test } from 'vitest';
import type { BookEvent } from '../../events.ts';
import { BookConflation } from '../bookConflation.ts';
import { PartitionLog } from '../partitionLog.ts';

const book = (market: string, ts: number, venue = 'v'): BookEvent => ({
  type: 'book', venue, market, asset: 'bitcoin', quote: 'USDT', ts, receivedAt: ts, bids: [[100, 1]], asks: [[101, 1]],
});
const held = (log: PartitionLog) => log.read(log.base, log.end).map((r) => `${(r.event as BookEvent).venue}/${(r.event as BookEvent).market}@${r.event.ts}`);

/** A books log with the conflation over it; `handedBelow` is the offset the readers have been handed up to. */
function setup() {
  const log = new PartitionLog('books', 0);
  const state = { handedBelow: 0 };
  const conflation = new BookConflation((_log, offset) => offset < state.handedBelow);
  const append = (e: BookEvent, bytes = 500) => conflation.appended(e, log, log.append(e, bytes).offset);
  return { log, state, conflation, append };
}

test('a book replaces its market\'s newest held book, in place, and returns the change in bytes', () => {
  const { log, conflation, append } = setup();
  append(book('A', 1));
  append(book('B', 1));
  append(book('A', 2), 500);
  expect(conflation.replace(book('A', 3), 700)).toBe(200);
  // A's older book stays as it was; only the newest is replaced, where it stood.
  expect(held(log)).toEqual(['v/A@1', 'v/B@1', 'v/A@3']);
  expect(conflation.replace(book('A', 4), 600)).toBe(-100);
  expect(held(log)).toEqual(['v/A@1', 'v/B@1', 'v/A@4']);
  expect(log.releaseBefore(3)).toEqual({ records: 3, bytes: 500 + 500 + 600 });
});

test('no book replaces another market\'s, nor the same market of another venue', () => {
  const { log, conflation, append } = setup();
  append(book('A', 1));
  expect(conflation.replace(book('B', 2), 500)).toBeUndefined();
  expect(conflation.replace(book('A', 2, 'w'), 500)).toBeUndefined();
  expect(held(log)).toEqual(['v/A@1']);
});

test('a book handed to a reader, or already released, is never replaced', () => {
  const { log, state, conflation, append } = setup();
  append(book('A', 1));
  append(book('B', 1));
  state.handedBelow = 1;
  expect(conflation.replace(book('A', 2), 500)).toBeUndefined();
  expect(conflation.replace(book('B', 2), 500)).toBe(0);
  log.releaseBefore(2);
  state.handedBelow = 0;
  expect(conflation.replace(book('B', 3), 500)).toBeUndefined();
  expect(held(log)).toEqual([]);
});
