// What a native collector's socket knows of its generations, driven without opening one: the
// connection's open events are handed in (`opened`), frames parsed by generation.
import { expect, test } from 'vitest';
import { createLogger } from '../../infra/log.ts';
import type { VenueDescriptor, VenueMessage } from '../venue.ts';
import { VenueSocket } from '../venueSocket.ts';

/** A venue whose parsers say who parsed: the descriptor, or the session of the nth connection. */
function socket(options: { sessions?: boolean; parse?: (text: string) => VenueMessage[] } = {}) {
  let made = 0;
  const venue: Pick<VenueDescriptor, 'sendsPerSecond' | 'parse' | 'session' | 'book'> = {
    sendsPerSecond: 5,
    parse: options.parse ?? ((text) => [{ kind: 'control', what: 'ack', detail: `venue ${text}` }]),
    ...(options.sessions
      ? {
          session: () => {
            const n = ++made;
            return { parse: (text: string): VenueMessage[] => [{ kind: 'control', what: 'ack', detail: `session ${n} ${text}` }] };
          },
        }
      : {}),
    book: { resubscribe: (symbols) => symbols.map((s) => `resubscribe ${s}`) },
  };
  return new VenueSocket({
    plan: { url: 'ws://127.0.0.1:9', subscribe: ['sub'], symbols: ['BTC'] },
    venue,
    io: { getJson: async () => ({}), postJson: async () => ({}), wsRequest: async () => Promise.reject(new Error('none')) },
    log: createLogger('silent'),
    tuning: { keepAlive: { pingEveryMs: 1_000, staleAfterMs: 5_000 }, rotateAfterMs: undefined, overlapMs: 100, backoff: { baseMs: 10, maxMs: 20 } },
    onStatus: () => {},
    onOpen: () => {},
    onFrame: () => {},
  });
}

const detail = (messages: VenueMessage[]) => (messages[0]?.kind === 'control' ? messages[0].detail : messages[0]?.kind);

test('frames are parsed by the session of their own connection, kept while a rotation overlaps, dropped after', () => {
  const s = socket({ sessions: true });
  expect(detail(s.parse('x', 0))).toBe('venue x');
  s.opened(1);
  expect(detail(s.parse('x', 1))).toBe('session 1 x');
  s.opened(2);
  expect([detail(s.parse('a', 1)), detail(s.parse('b', 2))]).toEqual(['session 1 a', 'session 2 b']);
  s.opened(3);
  // Generation 1 is two behind: its session is gone, the descriptor's parser stands in.
  expect([detail(s.parse('a', 1)), detail(s.parse('b', 2)), detail(s.parse('c', 3))]).toEqual(['venue a', 'session 2 b', 'session 3 c']);
});

test('without sessions every frame goes to the descriptor; a parser that throws gives an unknown message', () => {
  const s = socket();
  s.opened(1);
  expect(detail(s.parse('x', 1))).toBe('venue x');
  const throwing = socket({
    parse: () => {
      throw new Error('surprise');
    },
  });
  expect(throwing.parse('x', 0)).toEqual([{ kind: 'unknown' }]);
});

test('only the newest socket carries the book stream', () => {
  const s = socket();
  s.opened(1);
  expect(s.carriesBooks(1)).toBe(true);
  s.opened(2);
  expect([s.carriesBooks(1), s.carriesBooks(2)]).toEqual([false, true]);
});

test('the connection-wide sequence: checked on the newest socket only, started over at each open', () => {
  const s = socket();
  s.opened(1);
  expect([7, 8, 9].map((v) => s.sequenceHolds(v, 1))).toEqual([true, true, true]);
  expect(s.sequenceHolds(11, 1)).toBe(false);
  s.opened(2);
  // The old socket's numbers are not checked, and do not disturb the new one's.
  expect(s.sequenceHolds(500, 1)).toBe(true);
  expect([s.sequenceHolds(3, 2), s.sequenceHolds(4, 2), s.sequenceHolds(6, 2)]).toEqual([true, true, false]);
});

test("resubscription: the venue's messages when the connection has no session of its own", () => {
  const s = socket();
  expect(s.resubscribeMessages?.(['BTC', 'ETH'])).toEqual(['resubscribe BTC', 'resubscribe ETH']);
  expect(s.overlapping).toBe(false);
});
