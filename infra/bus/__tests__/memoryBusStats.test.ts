// What the in-process bus reports about itself: held records and bytes, each group's lag, and the
// warning that names the group falling behind. Expected values are counted by hand (a trade is
// estimated at 400 bytes, memoryBus.ts heldBytesOf).
import { afterEach, expect, test, vi } from 'vitest';
import { pino } from 'pino';
import type { TradeEvent } from '../../events.ts';
import { commitPositionsAfter, type BusRecord } from '../bus.ts';
import { createMemoryBus } from '../memoryBus.ts';

const trade = (i: number, asset = 'bitcoin'): TradeEvent => ({
  type: 'trade', venue: 'v', market: `${asset}-USDT`, asset, quote: 'USDT', ts: 1_700_000_000_000 + i, receivedAt: 1_700_000_000_000 + i,
  tradeId: String(i), price: 1, quantity: 1, side: 'buy',
});
const tick = () => new Promise((r) => setTimeout(r, 10));
const lagWarning = 'bus consumer falling behind: the topic is past half its bound';

function recordingLog() {
  const lines: Record<string, unknown>[] = [];
  const log = pino({ level: 'info' }, { write: (s: string) => void lines.push(JSON.parse(s)) });
  return { log, lines };
}

afterEach(() => vi.useRealTimers());

test('a lag is summed over partitions; held records and bytes fall as the slowest reading group commits', async () => {
  const bus = createMemoryBus({ partitions: 3 });
  const delivered: BusRecord<'trades'>[] = [];
  const fast = await bus.subscribe({ group: 'fast', topics: ['trades'], onBatch: async (records: BusRecord<'trades'>[]) => void delivered.push(...records) });
  await bus.subscribe({ group: 'idle', topics: ['liquidations'], onBatch: async () => {} });
  bus.publish(['bitcoin', 'ethereum', 'solana', 'cardano', 'ripple', 'dogecoin'].map((asset, i) => trade(i, asset)));
  await tick();
  expect(delivered).toHaveLength(6);
  // Assets are spread over the partitions (FNV-1a of the asset id), each asset always to the same one.
  expect(new Set(delivered.map((r) => r.partition)).size).toBeGreaterThan(1);
  let stats = bus.stats();
  expect(stats.lags).toEqual([
    { group: 'fast', topic: 'trades', records: 6, members: 1 },
    { group: 'idle', topic: 'liquidations', records: 0, members: 1 },
  ]);
  expect(stats.topics.trades).toMatchObject({ published: 6, heldRecords: 6, heldBytes: 2_400 });
  await fast.commit(commitPositionsAfter(delivered.slice(0, 2)));
  stats = bus.stats();
  // Each commit position releases what precedes it in its own partition.
  const released = delivered.filter((r) => delivered.slice(0, 2).some((c) => c.partition === r.partition && r.offset <= c.offset)).length;
  expect(stats.lags[0]).toEqual({ group: 'fast', topic: 'trades', records: 6 - released, members: 1 });
  expect(stats.topics.trades).toMatchObject({ heldRecords: 6 - released, heldBytes: 400 * (6 - released) });
  await fast.commit(commitPositionsAfter(delivered));
  expect(bus.stats().topics.trades).toMatchObject({ heldRecords: 0, heldBytes: 0 });
  expect(bus.stats().lags[0]!.records).toBe(0);
  expect(bus.description).toBe('memory(3 partitions)');
  expect(createMemoryBus().description).toBe('memory(1 partition)');
  await bus.close();
});

test('the byte bound refuses what would pass it, and commits make room again', async () => {
  const bus = createMemoryBus({ maxBytesPerTopic: 1_000 });
  const delivered: BusRecord<'trades'>[] = [];
  const sub = await bus.subscribe({ group: 'g', topics: ['trades'], onBatch: async (records: BusRecord<'trades'>[]) => void delivered.push(...records) });
  bus.publish([trade(1), trade(2), trade(3)]);
  await tick();
  expect(bus.stats().topics.trades).toMatchObject({ published: 2, dropped: 1, heldRecords: 2, heldBytes: 800 });
  await sub.commit(commitPositionsAfter(delivered.slice(0, 1)));
  bus.publish([trade(4), trade(5)]);
  expect(bus.stats().topics.trades).toMatchObject({ published: 3, dropped: 2, heldRecords: 2, heldBytes: 800 });
  await bus.close();
});

test('past half the bound the group furthest behind is named at error level, at most once a minute', async () => {
  vi.useFakeTimers({ toFake: ['Date'] });
  vi.setSystemTime(1_800_000_000_000);
  const { log, lines } = recordingLog();
  const bus = createMemoryBus({ maxRecordsPerTopic: 10, log });
  const ahead: BusRecord<'trades'>[] = [];
  const leader = await bus.subscribe({ group: 'leader', topics: ['trades'], onBatch: async (records: BusRecord<'trades'>[]) => void ahead.push(...records) });
  await bus.subscribe({ group: 'laggard', topics: ['trades'], onBatch: async () => {} });
  bus.publish([0, 1, 2, 3].map((i) => trade(i)));
  await tick();
  await leader.commit(commitPositionsAfter(ahead.slice(0, 3)));
  expect(lines.filter((l) => l.msg === lagWarning)).toHaveLength(0);
  bus.publish([trade(4)]);
  const warnings = () => lines.filter((l) => l.msg === lagWarning);
  expect(warnings()).toEqual([
    expect.objectContaining({ level: 50, topic: 'trades', group: 'laggard', lag: 5, heldRecords: 5, heldBytes: 2_000, maxRecords: 10 }),
  ]);
  vi.setSystemTime(1_800_000_059_999);
  bus.publish([trade(5)]);
  expect(warnings()).toHaveLength(1);
  vi.setSystemTime(1_800_000_060_000);
  bus.publish([trade(6)]);
  expect(warnings()).toHaveLength(2);
  expect(warnings()[1]).toMatchObject({ group: 'laggard', lag: 7, heldRecords: 7 });
  await bus.close();
});

test('the byte half of the bound warns as well, from exactly half', async () => {
  const { log, lines } = recordingLog();
  const bus = createMemoryBus({ maxBytesPerTopic: 2_400, log });
  await bus.subscribe({ group: 'stuck', topics: ['trades'], onBatch: async () => {} });
  bus.publish([trade(0), trade(1)]);
  expect(lines.filter((l) => l.msg === lagWarning)).toHaveLength(0);
  bus.publish([trade(2)]);
  expect(lines.filter((l) => l.msg === lagWarning)).toEqual([expect.objectContaining({ group: 'stuck', heldBytes: 1_200 })]);
  await bus.close();
});

test('past half the bound with no group reading, the warning names no group', async () => {
  const { log, lines } = recordingLog();
  const bus = createMemoryBus({ maxRecordsPerTopic: 4, log });
  bus.publish([trade(0), trade(1)]);
  const warnings = lines.filter((l) => l.msg === lagWarning);
  expect(warnings).toEqual([expect.objectContaining({ topic: 'trades', heldRecords: 2 })]);
  expect(warnings[0]).not.toHaveProperty('group');
  await bus.close();
});

test('a member stopped twice is counted out of its group once', async () => {
  const bus = createMemoryBus();
  const first = await bus.subscribe({ group: 'g', topics: ['trades'], onBatch: async () => {} });
  await bus.subscribe({ group: 'g', topics: ['trades'], onBatch: async () => {} });
  await first.stop();
  await first.stop();
  expect(bus.stats().lags).toEqual([{ group: 'g', topic: 'trades', records: 0, members: 1 }]);
  await bus.close();
});

test('a book is estimated at 400 bytes plus 96 per level; conflation replaces its bytes; only a book of the same market is replaced', async () => {
  const book = (market: string, bids: number, asks: number) => ({
    type: 'book' as const, venue: 'v', market, asset: 'bitcoin', quote: 'USDT', ts: 1_700_000_000_000, receivedAt: 1_700_000_000_000,
    bids: Array.from({ length: bids }, (_, k) => [100 - k, 1] as [number, number]),
    asks: Array.from({ length: asks }, (_, k) => [101 + k, 1] as [number, number]),
  });
  const bus = createMemoryBus({ maxRecordsPerTopic: 1 });
  // A trade of market M: the newest *book* of M is still none.
  bus.publish([{ ...trade(1), market: 'M' }]);
  bus.publish([book('N', 2, 1)]);
  expect(bus.stats().topics.books).toMatchObject({ published: 1, heldRecords: 1, heldBytes: 688 });
  bus.publish([book('N', 1, 1)]);
  expect(bus.stats().topics.books).toMatchObject({ published: 1, conflated: 1, heldRecords: 1, heldBytes: 592 });
  bus.publish([book('M', 1, 0)]);
  expect(bus.stats().topics.books).toMatchObject({ published: 1, conflated: 1, dropped: 1, heldBytes: 592 });
  expect(bus.stats().topics.trades).toMatchObject({ published: 1, heldRecords: 1, heldBytes: 400 });
  await bus.close();
});

test('after close no member is handed anything more', async () => {
  const bus = createMemoryBus();
  const seen: string[] = [];
  await bus.subscribe({ group: 'g', topics: ['trades'], onBatch: async (records: BusRecord<'trades'>[]) => void seen.push(...records.map((r) => r.event.tradeId)) });
  bus.publish([trade(1)]);
  await tick();
  await bus.close();
  bus.publish([trade(2)]);
  await tick();
  expect(seen).toEqual(['1']);
});

test('a member busy with a batch when the bus closes is handed nothing more once it returns', async () => {
  const bus = createMemoryBus();
  let resume: () => void = () => {};
  const seen: string[] = [];
  await bus.subscribe({
    group: 'g',
    topics: ['trades'],
    onBatch: async (records: BusRecord<'trades'>[]) => {
      seen.push(...records.map((r) => r.event.tradeId));
      if (seen.length === 1) await new Promise<void>((r) => (resume = r));
    },
  });
  bus.publish([trade(1)]);
  await tick();
  bus.publish([trade(2)]);
  await bus.close();
  resume();
  await tick();
  expect(seen).toEqual(['1']);
});
