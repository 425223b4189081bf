import { fixture } from './fixtures.ts';
import type { BookSync } from '../bookSync.ts';
import type { BookMessage, BookRule, VenueMessage } from '../venue.ts';

/** One frame of a recorded connection: the text as received and the recorder's receive time (seconds since the epoch). */
export interface RecordedFrame {
  at: number;
  text: string;
}

/** A connection recorded by cryptofeed (`ws_recorded_cryptofeed.json`), in receive order. */
export function recordedSession(venue: string, name = 'ws_recorded_cryptofeed.json'): RecordedFrame[] {
  return fixture(venue, name) as RecordedFrame[];
}

/** Messages counted by kind, controls by what they are (`control:ack`). */
export function countKinds(messages: readonly VenueMessage[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const m of messages) {
    const key = m.kind === 'control' ? `control:${m.what}` : m.kind;
    counts[key] = (counts[key] ?? 0) + 1;
  }
  return counts;
}

export type Trade = Extract<VenueMessage, { kind: 'trade' }>;
export const tradesOf = (messages: readonly VenueMessage[]) => messages.filter((m): m is Trade => m.kind === 'trade');

/**
 * Where a trade printed against the book of that moment: at or above the best ask a taker bought,
 * at or below the best bid a taker sold; inside the spread it cannot be placed.
 */
export function placedSide(price: number, bestBid: number, bestAsk: number): 'buy' | 'sell' | undefined {
  if (price >= bestAsk) return 'buy';
  if (price <= bestBid) return 'sell';
  return undefined;
}

/** A REST book snapshot the recorder fetched on the same connection's behalf, with its receive time. */
export interface RecordedRest {
  at: number;
  json: unknown;
}

/**
 * Replays one market's recorded book updates through the book sync as the collector does: updates
 * received before the REST snapshot are buffered, the snapshot is applied when it arrived, the rest
 * follow. Returns the outcome of the snapshot and of every later update.
 */
export function replayWithRest(sync: BookSync, rule: BookRule, updates: readonly { at: number; message: BookMessage }[], rest: RecordedRest) {
  const before = updates.filter((u) => u.at < rest.at);
  const after = updates.filter((u) => u.at >= rest.at);
  const buffered = before.map((u) => sync.onMessage(u.message));
  const snapshot = sync.onRestSnapshot(rule.restSnapshot!.parse(rest.json));
  return { buffered, snapshot, after: after.map((u) => sync.onMessage(u.message)) };
}
