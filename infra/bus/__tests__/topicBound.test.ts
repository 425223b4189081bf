// The bound of one topic of the in-process bus, in records and in estimated bytes.
import { expect, test } from 'vitest';
import { TopicBound } from '../topicBound.ts';

test('one more record overflows at the record bound, or when its bytes would pass the byte bound', () => {
  const bound = new TopicBound(3, 1_000);
  bound.add(300);
  bound.add(300);
  expect(bound.wouldOverflow(400)).toBe(false);
  expect(bound.wouldOverflow(401)).toBe(true);
  bound.add(100);
  // Three records, 700 bytes: the record bound is reached, whatever the size.
  expect(bound.wouldOverflow(1)).toBe(true);
  expect(bound.held()).toEqual({ records: 3, bytes: 700 });
});

test('released records and replaced events are counted out; a replacement changes bytes, not records', () => {
  const bound = new TopicBound(10, 10_000);
  for (const bytes of [400, 500, 600]) bound.add(bytes);
  bound.resize(-100);
  expect(bound.held()).toEqual({ records: 3, bytes: 1_400 });
  bound.remove({ records: 2, bytes: 800 });
  expect(bound.held()).toEqual({ records: 1, bytes: 600 });
  bound.resize(250);
  expect(bound.held()).toEqual({ records: 1, bytes: 850 });
});

test('a share of the bound is held from exactly that share, in records or in bytes', () => {
  const byRecords = new TopicBound(4, 1_000_000);
  byRecords.add(1);
  expect(byRecords.holdsShare(0.5)).toBe(false);
  byRecords.add(1);
  expect(byRecords.holdsShare(0.5)).toBe(true);
  const byBytes = new TopicBound(1_000, 1_000);
  byBytes.add(499);
  expect(byBytes.holdsShare(0.5)).toBe(false);
  byBytes.resize(1);
  expect(byBytes.holdsShare(0.5)).toBe(true);
});
