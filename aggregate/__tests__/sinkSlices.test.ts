import { createHash } from 'node:crypto';
import { expect, test } from 'vitest';
import type { BusRecord } from '../../infra/bus/bus.ts';
import type { TradeEvent } from '../../infra/events.ts';
import { planSlices, sliceToken, type OffsetRange } from '../sinkSlices.ts';

const record = (partition: number, offset: number): BusRecord<'trades'> => ({
  topic: 'trades',
  partition,
  offset,
  event: { type: 'trade', venue: 'v', market: `M${partition}`, asset: `a${partition}`, quote: 'USD', tradeId: String(offset), price: 1, quantity: 1, side: 'buy', ts: offset, receivedAt: offset } as TradeEvent,
});
const range = (partition: number, first: number, last: number): OffsetRange => ({ topic: 'trades', partition, first, last });
/** A token that names what it was made of, so a test reads which ranges and records a slice carries. */
const spell = (ranges: readonly OffsetRange[], records: readonly BusRecord<'trades'>[]) =>
  `${ranges.map((r) => `${r.partition}:${r.first}-${r.last}`).join(',')}|${records.map((r) => `${r.partition}/${r.offset}`).join(',')}`;
const shapes = (plan: ReturnType<typeof planSlices<'trades'>>) => plan.slices.map((s) => ({ token: s.token, repeat: s.repeat }));

test('without repeats: one slice for all partitions, or one per partition, each record once in offset order', () => {
  const records = [record(1, 7), record(0, 3), record(1, 8), record(0, 2)];
  expect(shapes(planSlices(records, [], false, spell))).toEqual([{ token: '0:2-3,1:7-8|0/2,0/3,1/7,1/8', repeat: false }]);
  expect(shapes(planSlices(records, [], true, spell))).toEqual([
    { token: '1:7-8|1/7,1/8', repeat: false },
    { token: '0:2-3|0/2,0/3', repeat: false },
  ]);
  expect(planSlices([], [], true, spell)).toEqual({ slices: [], waiting: [], pending: [] });
});

test('a repeat goes first with exactly its range, and the rest of the partition after it', () => {
  const records = [10, 11, 12, 13, 14].map((o) => record(0, o));
  const plan = planSlices(records, [{ ranges: [range(0, 10, 12)] }], true, spell);
  expect(shapes(plan)).toEqual([
    { token: '0:10-12|0/10,0/11,0/12', repeat: true },
    { token: '0:13-14|0/13,0/14', repeat: false },
  ]);
  expect(plan.waiting).toEqual([]);
  expect(plan.pending).toEqual([]);
});

test('a repeat whose last offset has not been delivered holds its whole partition back; other partitions go on', () => {
  const records = [record(0, 10), record(0, 11), record(1, 4)];
  const repeat = { ranges: [range(0, 10, 12)] };
  const plan = planSlices(records, [repeat, { ranges: [range(0, 13, 15)] }], true, spell);
  expect(shapes(plan)).toEqual([{ token: '1:4-4|1/4', repeat: false }]);
  expect(plan.waiting.map((r) => r.offset)).toEqual([10, 11]);
  // The later repeat of the same partition waits behind the first, though nothing of it is there.
  expect(plan.pending).toEqual([repeat, { ranges: [range(0, 13, 15)] }]);
});

test('a repeat over two partitions (the in-process bus, one slice for all) needs both complete', () => {
  const repeat = { ranges: [range(0, 1, 2), range(1, 5, 5)] };
  const incomplete = planSlices([record(0, 1), record(0, 2), record(1, 4)], [repeat], false, spell);
  expect(incomplete.slices).toEqual([]);
  expect(incomplete.waiting.map((r) => `${r.partition}/${r.offset}`)).toEqual(['0/1', '0/2', '1/4']);
  const complete = planSlices([record(1, 5), record(0, 2), record(0, 1), record(1, 6)], [repeat], false, spell);
  expect(shapes(complete)).toEqual([
    { token: '0:1-2,1:5-5|0/1,0/2,1/5', repeat: true },
    { token: '1:6-6|1/6', repeat: false },
  ]);
});

test('the token is the same for the same ranges and records, whoever cuts them, and differs otherwise', () => {
  const keys = ['v\u0000M0\u00001', 'v\u0000M0\u00002'];
  const token = sliceToken('trades', [range(0, 1, 2)], keys);
  const expected = createHash('sha256').update('trades').update('\ntrades/0:1-2').update(`\n${keys[0]}`).update(`\n${keys[1]}`).digest('hex');
  expect(token).toBe(`trades:${expected}`);
  expect(sliceToken('trades', [range(0, 1, 2)], [...keys])).toBe(token);
  expect(sliceToken('liquidations', [range(0, 1, 2)], keys)).not.toBe(token);
  expect(sliceToken('trades', [range(0, 1, 3)], keys)).not.toBe(token);
  expect(sliceToken('trades', [range(1, 1, 2)], keys)).not.toBe(token);
  expect(sliceToken('trades', [range(0, 1, 2)], [keys[0]!])).not.toBe(token);
});
