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

// The order a token reads records in is fixed by topic, then partition, then offset: a repeat must
// spell the token of the insert it repeats, whoever cut it and in whatever order the records came.
test('records are read by topic, then partition, then offset, whatever their offsets say across partitions and topics', () => {
  // Partition 1's offsets are below partition 0's: an order by offset alone would put them first.
  const records = [record(1, 2), record(0, 7), record(1, 3), record(0, 8)];
  expect(shapes(planSlices(records, [], false, spell))).toEqual([{ token: '0:7-8,1:2-3|0/7,0/8,1/2,1/3', repeat: false }]);
  // A repeat naming its ranges out of partition order still reads partition 0 first.
  const repeat = planSlices(records, [{ ranges: [range(1, 2, 3), range(0, 7, 8)] }], false, spell);
  expect(shapes(repeat)).toEqual([{ token: '1:2-3,0:7-8|0/7,0/8,1/2,1/3', repeat: true }]);
  // Two topics: liquidations before trades, though the trade comes first and has the lower offset.
  const liquidation = (offset: number) => ({ ...record(0, offset), topic: 'liquidations' }) as unknown as BusRecord<'trades'>;
  const topicOrder = (rs: BusRecord<'trades'>[]) => planSlices(rs, [], false, (_, recs) => recs.map((r) => `${r.topic}/${r.offset}`).join(',')).slices[0]!.token;
  expect(topicOrder([record(0, 1), liquidation(5)])).toBe('liquidations/5,trades/1');
  expect(topicOrder([liquidation(5), record(0, 1)])).toBe('liquidations/5,trades/1');
});

test('a repeat takes only the records of its range: those before it are left out of every slice', () => {
  // Offsets 0-2 come before the range a previous owner recorded (a slice of duplicates has no intent).
  const records = [0, 1, 2, 3, 4, 5].map((o) => record(0, o));
  const plan = planSlices(records, [{ ranges: [range(0, 3, 5)] }], true, spell);
  expect(shapes(plan)).toEqual([{ token: '0:3-5|0/3,0/4,0/5', repeat: true }]);
  expect(plan.waiting).toEqual([]);
});

test('a repeat that takes its partition whole leaves no empty slice; one whose range has no record left makes none', () => {
  const whole = planSlices([10, 11, 12].map((o) => record(0, o)), [{ ranges: [range(0, 10, 12)] }], true, spell);
  expect(shapes(whole)).toEqual([{ token: '0:10-12|0/10,0/11,0/12', repeat: true }]);
  // Delivery already past the range: complete, but nothing to take.
  const past = planSlices([record(0, 13)], [{ ranges: [range(0, 10, 12)] }], true, spell);
  expect(shapes(past)).toEqual([{ token: '0:13-13|0/13', repeat: false }]);
  expect(past.pending).toEqual([]);
});

test('a second repeat of a partition waits for its own records once the first has taken all there are, and one of a partition with no records waits too', () => {
  const first = { ranges: [range(0, 0, 0)] };
  const second = { ranges: [range(0, 1, 1)] };
  const plan = planSlices([record(0, 0)], [first, second], true, spell);
  expect(shapes(plan)).toEqual([{ token: '0:0-0|0/0', repeat: true }]);
  expect(plan.pending).toEqual([second]);
  const longer = planSlices([0, 1, 2, 3, 4].map((o) => record(0, o)), [{ ranges: [range(0, 0, 4)] }, { ranges: [range(0, 5, 9)] }], true, spell);
  expect(shapes(longer)).toEqual([{ token: '0:0-4|0/0,0/1,0/2,0/3,0/4', repeat: true }]);
  expect(longer.pending).toEqual([{ ranges: [range(0, 5, 9)] }]);
  // Partition 0 has nothing in this flush: its repeat waits, partition 1 goes on.
  const other = planSlices([record(1, 4)], [{ ranges: [range(0, 5, 9)] }], true, spell);
  expect(shapes(other)).toEqual([{ token: '1:4-4|1/4', repeat: false }]);
  expect(other.pending).toEqual([{ ranges: [range(0, 5, 9)] }]);
});
