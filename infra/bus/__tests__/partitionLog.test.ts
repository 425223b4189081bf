// One partition of the in-process bus on its own: offsets, reads, replacing a record, and releasing
// what precedes an offset with the records and bytes it frees.
import { expect, test } from 'vitest';
import type { TradeEvent } from '../../events.ts';
import { PartitionLog } from '../partitionLog.ts';

const trade = (i: number): TradeEvent => ({
  type: 'trade', venue: 'v', market: 'BTCUSDT', asset: 'bitcoin', quote: 'USDT', ts: 1_700_000_000_000 + i, receivedAt: 1_700_000_000_000 + i,
  tradeId: String(i), price: 1, quantity: 1, side: 'buy',
});
const ids = (log: PartitionLog, from: number, to: number) => log.read(from, to).map((r) => (r.event as TradeEvent).tradeId);

/** A log of `trades` with the sizes 100, 200, 300, ... */
function logOf(n: number): PartitionLog {
  const log = new PartitionLog('trades', 2);
  for (let i = 0; i < n; i++) log.append(trade(i), 100 * (i + 1));
  return log;
}

test('records take offsets from 0 in the order appended, and carry their topic and partition', () => {
  const log = new PartitionLog('trades', 2);
  expect([log.base, log.end]).toEqual([0, 0]);
  expect(log.append(trade(7), 400)).toEqual({ topic: 'trades', partition: 2, offset: 0, event: trade(7) });
  expect(log.append(trade(8), 400).offset).toBe(1);
  expect([log.base, log.end]).toEqual([0, 2]);
  expect(ids(log, 0, 2)).toEqual(['7', '8']);
  expect(ids(log, 1, 2)).toEqual(['8']);
});

test('releasing before an offset frees exactly the records before it, and their bytes', () => {
  const log = logOf(5);
  expect(log.releaseBefore(2)).toEqual({ records: 2, bytes: 100 + 200 });
  expect([log.base, log.end]).toEqual([2, 5]);
  // Offsets do not move: reading from the new base gives the third record.
  expect(ids(log, 2, 5)).toEqual(['2', '3', '4']);
  expect(ids(log, 2, 3)).toEqual(['2']);
  expect(ids(log, 3, 4)).toEqual(['3']);
  expect(log.holds(1)).toBe(false);
  expect(log.holds(2)).toBe(true);
  expect(log.holds(5)).toBe(false);
});

test('releasing at or before the base frees nothing; past the end frees what is held, and the next record keeps its offset', () => {
  const log = logOf(3);
  log.releaseBefore(1);
  expect(log.releaseBefore(1)).toEqual({ records: 0, bytes: 0 });
  expect(log.releaseBefore(0)).toEqual({ records: 0, bytes: 0 });
  expect(log.releaseBefore(10)).toEqual({ records: 2, bytes: 200 + 300 });
  expect([log.base, log.end]).toEqual([3, 3]);
  expect(log.append(trade(3), 50).offset).toBe(3);
  expect(log.releaseBefore(4)).toEqual({ records: 1, bytes: 50 });
});

test('replacing a held record changes its event in place and returns the change in bytes', () => {
  const log = logOf(3);
  log.releaseBefore(1);
  expect(log.replace(2, trade(9), 250)).toBe(250 - 300);
  expect(ids(log, 1, 3)).toEqual(['1', '9']);
  // The replaced size is what a later release frees.
  expect(log.releaseBefore(3)).toEqual({ records: 2, bytes: 200 + 250 });
});
