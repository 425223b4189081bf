// What a native collector's socket knows of its generations, driven without opening one: the
// connection's open events are handed in (`opened`), frames parsed by generation.
import { expect, test } from 'vitest';
import { createLogger } from '../../infra/log.ts';
import type { VenueDescriptor, VenueMessage } from '../venue.ts';
import { VenueSocket } from '../venueSocket.ts';

/** A venue whose parsers say who parsed: the descriptor, or the session of the nth connection. */
function socket(options: { sessions?: boolean; parse?: (text: string) => VenueMessage[]; subscribesPerHour?: number; now?: () => number } = {}) {
  let made = 0;
  const venue: Pick<VenueDescriptor, 'sendsPerSecond' | 'parse' | 'session' | 'book' | 'subscribesPerHour'> = {
    sendsPerSecond: 5,
    ...(options.subscribesPerHour !== undefined ? { subscribesPerHour: options.subscribesPerHour } : {}),
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
    ...(options.now ? { now: options.now } : {}),
  });
}

/** The socket's connection, recording what it is asked to send and to rotate (nothing is opened). */
function recorded(s: VenueSocket) {
  const sent: string[][] = [];
  const rotations: string[] = [];
  s.connection.send = (messages) => void sent.push([...messages]);
  s.connection.rotate = (reason) => void rotations.push(reason);
  return { sent, rotations };
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

test("book resyncs within the venue's subscribe requests per connection per hour; the one that would pass them rotates the socket instead", () => {
  let now = 1_000_000;
  const s = socket({ subscribesPerHour: 5, now: () => now });
  const { sent, rotations } = recorded(s);
  // The connection opens: its subscription ('sub', one request) counts first.
  s.opened(1);
  s.send(['unsub BTC', 'sub BTC']);
  now += 1_000;
  s.send(['unsub BTC', 'sub BTC']);
  expect(sent).toHaveLength(2);
  expect(rotations).toEqual([]);
  // 5 used: two more would make 7.
  now += 1_000;
  s.send(['unsub BTC', 'sub BTC']);
  expect(sent).toHaveLength(2);
  expect(rotations).toEqual(["a book resync would pass the venue's 5 subscribe requests per connection per hour"]);
  // An hour after the subscription and the first resync (not yet after the second), three are free again.
  now = 1_000_000 + 3_600_000;
  s.send(['unsub BTC', 'sub BTC']);
  expect(sent).toHaveLength(3);
  // 4 used: one more fits, then two more do not.
  s.send(['one more']);
  expect(sent).toHaveLength(4);
  s.send(['unsub BTC', 'sub BTC']);
  expect(rotations).toHaveLength(2);
  // The replacement connection: its own hour, less its subscription.
  s.opened(2);
  s.send(['a', 'b', 'c', 'd']);
  expect(sent).toHaveLength(5);
  s.send(['e']);
  expect(rotations).toHaveLength(3);
});

test('a venue without a documented subscribe limit: every resync is sent', () => {
  const s = socket();
  const { sent, rotations } = recorded(s);
  s.opened(1);
  for (let i = 0; i < 1_000; i++) s.send(['unsub', 'sub']);
  expect(sent).toHaveLength(1_000);
  expect(rotations).toEqual([]);
});
