// The Kafka producer's buffer on its own: its bound, the request in flight (held, but outside the
// bound), a failed request put back in front with the newest refused, and what a flush waits for.
import { expect, test } from 'vitest';
import type { Topic } from '../../events.ts';
import { ProducerBuffer } from '../producerBuffer.ts';

const message = (value: string) => ({ key: 'bitcoin', value });
const seqs = (events: { seq: number }[]) => events.map((e) => e.seq);

function bufferWith(maxBuffered: number, values: [Topic, string][]): ProducerBuffer {
  const buffer = new ProducerBuffer(maxBuffered);
  for (const [topic, value] of values) buffer.push(topic, message(value));
  return buffer;
}

test('events are numbered in publish order; the buffer is full at its bound of waiting events', () => {
  const buffer = bufferWith(3, [['trades', 'a'], ['books', 'b']]);
  expect([buffer.lastSeq, buffer.waiting, buffer.full]).toEqual([2, 2, false]);
  buffer.push('trades', message('c'));
  expect([buffer.lastSeq, buffer.waiting, buffer.full]).toEqual([3, 3, true]);
});

test('the request under way leaves the bound but stays held until it is sent', () => {
  const buffer = bufferWith(3, [['trades', 'a'], ['trades', 'b'], ['books', 'c']]);
  expect(seqs(buffer.startRequest(2))).toEqual([1, 2]);
  expect([buffer.waiting, buffer.full]).toEqual([1, false]);
  buffer.push('trades', message('d'));
  buffer.push('trades', message('e'));
  expect(buffer.full).toBe(true);
  // Held: the two in flight and the three waiting.
  expect(buffer.heldUpTo(5)).toBe(5);
  buffer.sent();
  expect(buffer.heldUpTo(5)).toBe(3);
  expect(seqs(buffer.startRequest(10))).toEqual([3, 4, 5]);
});

test('a failed request goes back in front; what then passes the bound is returned, the newest events', () => {
  const buffer = bufferWith(3, [['trades', 'a'], ['trades', 'b']]);
  buffer.startRequest(2);
  buffer.push('books', message('c'));
  buffer.push('books', message('d'));
  buffer.push('liquidations', message('e'));
  const refused = buffer.failed();
  expect(refused.map((e) => [e.seq, e.topic])).toEqual([[4, 'books'], [5, 'liquidations']]);
  expect(seqs(buffer.startRequest(10))).toEqual([1, 2, 3]);
  buffer.sent();
  expect(buffer.heldUpTo(5)).toBe(0);
});

test('what a flush waits for: the events numbered up to its own, in flight or waiting, not those after', () => {
  const buffer = bufferWith(10, [['trades', 'a'], ['trades', 'b']]);
  buffer.startRequest(1);
  const flushTarget = buffer.lastSeq;
  buffer.push('trades', message('c'));
  expect(buffer.heldUpTo(flushTarget)).toBe(2);
  buffer.sent();
  expect(buffer.heldUpTo(flushTarget)).toBe(1);
  buffer.startRequest(1);
  buffer.sent();
  expect(buffer.heldUpTo(flushTarget)).toBe(0);
  expect(buffer.heldUpTo(buffer.lastSeq)).toBe(1);
});

test('held records and bytes per topic count the request in flight and the waiting events, by encoded length', () => {
  const buffer = bufferWith(10, [['trades', 'abc'], ['books', 'defgh'], ['trades', 'ij']]);
  buffer.startRequest(1);
  const held = buffer.heldByTopic();
  expect(Object.fromEntries(held)).toEqual({
    trades: { records: 2, bytes: 5 },
    books: { records: 1, bytes: 5 },
    liquidations: { records: 0, bytes: 0 },
    statuses: { records: 0, bytes: 0 },
    gaps: { records: 0, bytes: 0 },
  });
  buffer.sent();
  expect(buffer.heldByTopic().get('trades')).toEqual({ records: 1, bytes: 2 });
});

test('the request under way counts toward a flush only for its events numbered up to the flush\'s', () => {
  const buffer = bufferWith(10, [['trades', 'a'], ['trades', 'b'], ['trades', 'c']]);
  buffer.startRequest(2);
  expect([buffer.heldUpTo(0), buffer.heldUpTo(1), buffer.heldUpTo(2), buffer.heldUpTo(3)]).toEqual([0, 1, 2, 3]);
});
