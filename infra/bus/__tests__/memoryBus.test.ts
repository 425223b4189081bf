// The in-process bus at and past its bounds: what is kept, conflated, refused and counted.
import { expect, test } from 'vitest';
import { pino } from 'pino';
import type { BookEvent, LiquidationEvent, TradeEvent } from '../../events.ts';
import { commitPositionsAfter, type BusRecord } from '../bus.ts';
import { createMemoryBus, heldBytesOf } from '../memoryBus.ts';

const base = (i: number, market = 'BTCUSDT') => ({ venue: 'v', market, asset: 'bitcoin', quote: 'USDT', ts: 1_700_000_000_000 + i, receivedAt: 1_700_000_000_000 + i });
const trade = (i: number): TradeEvent => ({ type: 'trade', ...base(i), tradeId: String(i), price: 1, quantity: 1, side: 'buy' });
const liquidation = (i: number): LiquidationEvent => ({ type: 'liquidation', ...base(i), liquidationId: String(i), price: 1, quantity: 1, positionSide: 'long' });
const book = (i: number, market: string, levels = 1): BookEvent => ({
  type: 'book', ...base(i, market),
  bids: Array.from({ length: levels }, (_, k) => [100 - k - i / 1e6, 1] as [number, number]),
  asks: Array.from({ length: levels }, (_, k) => [101 + k, 1] as [number, number]),
});
const tick = () => new Promise((r) => setTimeout(r, 10));

/** A logger whose lines the test reads. */
function recordingLog() {
  const lines: Record<string, unknown>[] = [];
  const log = pino({ level: 'info' }, { write: (s: string) => void lines.push(JSON.parse(s)) });
  return { log, lines };
}

test('a group that never commits fills its topic only: its events are refused, counted and logged with the group; other topics flow', async () => {
  const { log, lines } = recordingLog();
  const bus = createMemoryBus({ maxRecordsPerTopic: 100, log });
  await bus.subscribe({ group: 'stuck-trades', topics: ['trades'], onBatch: async () => {} });
  const liquidations: string[] = [];
  const liq = await bus.subscribe({
    group: 'liquidations',
    topics: ['liquidations'],
    onBatch: async (records: BusRecord<'liquidations'>[]) => {
      liquidations.push(...records.map((r) => r.event.liquidationId));
      await liq.commit(commitPositionsAfter(records));
    },
  });
  for (let i = 0; i < 1_000; i++) {
    bus.publish([trade(i), liquidation(i)]);
    if (i % 50 === 0) await tick();
  }
  await tick();
  const stats = bus.stats();
  // Exactly the bound is held; everything past it is refused and counted, on trades alone.
  expect(stats.topics.trades).toMatchObject({ published: 100, dropped: 900, heldRecords: 100 });
  expect(stats.topics.liquidations).toMatchObject({ published: 1_000, dropped: 0, heldRecords: 0 });
  expect(liquidations).toHaveLength(1_000);
  expect(stats.dropped).toBe(900);
  expect(stats.lags).toContainEqual({ group: 'stuck-trades', topic: 'trades', records: 100, members: 1 });
  const refusal = lines.find((l) => l.msg === 'bus full: events refused and lost');
  expect(refusal).toMatchObject({ level: 50, topic: 'trades', group: 'stuck-trades' });
  expect(lines.find((l) => l.msg === 'bus consumer falling behind: the topic is past half its bound')).toMatchObject({ level: 50, topic: 'trades', group: 'stuck-trades' });
  await bus.close();
});

test('at the bound a book replaces the same market\'s newest book that no reader has been handed; the reader then gets the newest state', async () => {
  const bus = createMemoryBus({ maxRecordsPerTopic: 10 });
  // The reader takes one batch and holds it: what it was handed cannot change any more.
  let release: () => void = () => {};
  const handed: BookEvent[][] = [];
  const sub = await bus.subscribe({
    group: 'books',
    topics: ['books'],
    onBatch: async (records: BusRecord<'books'>[]) => {
      handed.push(records.map((r) => r.event));
      if (handed.length === 1) await new Promise<void>((r) => (release = r));
      await sub.commit(commitPositionsAfter(records));
    },
  });
  const markets = ['M0', 'M1', 'M2', 'M3', 'M4'];
  bus.publish(markets.map((m) => book(0, m)));
  await tick();
  expect(handed).toHaveLength(1);
  // 5 more fill the topic to its bound; 100 rounds after that can only conflate.
  bus.publish(markets.map((m) => book(1, m)));
  for (let i = 2; i < 102; i++) bus.publish(markets.map((m) => book(i, m)));
  let stats = bus.stats();
  expect(stats.topics.books).toMatchObject({ published: 10, conflated: 500, dropped: 0, heldRecords: 10 });
  release();
  await tick();
  // The second batch holds each market once, in its newest state.
  expect(handed[1]!.map((b) => [b.market, b.ts])).toEqual(markets.map((m) => [m, base(101).ts]));
  stats = bus.stats();
  expect(stats.topics.books.heldRecords).toBe(0);
  await bus.close();
});

test('a book already handed to a reader is never changed: at the bound, with nothing left to conflate, new books are refused', async () => {
  const bus = createMemoryBus({ maxRecordsPerTopic: 4 });
  const handed: BookEvent[] = [];
  await bus.subscribe({ group: 'slow-books', topics: ['books'], onBatch: async (records: BusRecord<'books'>[]) => void handed.push(...records.map((r) => r.event)) });
  bus.publish([book(0, 'A'), book(0, 'B'), book(0, 'C'), book(0, 'D')]);
  await tick();
  expect(handed).toHaveLength(4);
  bus.publish([book(1, 'A')]);
  expect(bus.stats().topics.books).toMatchObject({ conflated: 0, dropped: 1 });
  expect(handed[0]!.ts).toBe(base(0).ts);
  await bus.close();
});

test('the bound is in bytes as well as records: large books reach it long before the record count', async () => {
  const oneBook = heldBytesOf(book(0, 'X', 50));
  const bus = createMemoryBus({ maxRecordsPerTopic: 1_000_000, maxBytesPerTopic: 20 * oneBook });
  await bus.subscribe({ group: 'stuck-books', topics: ['books'], onBatch: async () => new Promise(() => {}) });
  for (let i = 0; i < 100; i++) bus.publish([book(i, `X${i}`, 50)]);
  const stats = bus.stats().topics.books;
  expect(stats.heldRecords).toBe(20);
  expect(stats.heldBytes).toBe(20 * oneBook);
  expect(stats.dropped).toBe(80);
  await bus.close();
});

test('a group whose members all stopped no longer holds the log; when it comes back it resumes at what is still held', async () => {
  const bus = createMemoryBus({ maxRecordsPerTopic: 50 });
  const got: string[] = [];
  const live = await bus.subscribe({
    group: 'live',
    topics: ['trades'],
    onBatch: async (records: BusRecord<'trades'>[]) => {
      got.push(...records.map((r) => r.event.tradeId));
      await live.commit(commitPositionsAfter(records));
    },
  });
  const gone = await bus.subscribe({ group: 'gone', topics: ['trades'], onBatch: async () => {} });
  bus.publish([trade(0), trade(1)]);
  await tick();
  expect(bus.stats().topics.trades.heldRecords).toBe(2);
  await gone.stop();
  expect(bus.stats().topics.trades.heldRecords).toBe(0);
  for (let i = 2; i < 500; i++) {
    bus.publish([trade(i)]);
    if (i % 25 === 0) await tick();
  }
  await tick();
  expect(bus.stats().topics.trades.dropped).toBe(0);
  expect(got).toHaveLength(500);
  // Back: it starts at the oldest record still held, not at its old commit (0).
  const back: string[] = [];
  await bus.subscribe({ group: 'gone', topics: ['trades'], onBatch: async (records: BusRecord<'trades'>[]) => void back.push(...records.map((r) => r.event.tradeId)) });
  bus.publish([trade(500)]);
  await tick();
  expect(back).toEqual(['500']);
  await bus.close();
});
