// The in-process bus: what it delivers to whom (redelivery, groups, where a group starts, batch
// size), and at and past its bounds what is kept, conflated, refused and counted.
import { afterEach, expect, test, vi } from 'vitest';
import { pino } from 'pino';
import type { BookEvent, LiquidationEvent, TradeEvent } from '../../events.ts';
import type { Logger } from '../../log.ts';
import { commitPositionsAfter, type BusRecord, type Subscription } from '../bus.ts';
import { createMemoryBus, heldBytesOf } from '../memoryBus.ts';
import { until } from '../../../test/support/until.ts';

const base = (i: number, market = 'BTCUSDT') => ({ venue: 'v', market, asset: 'bitcoin', quote: 'USDT', ts: 1_700_000_000_000 + i, receivedAt: 1_700_000_000_000 + i });
const trade = (i: number, asset = 'bitcoin'): TradeEvent => ({ type: 'trade', ...base(i), asset, tradeId: String(i), price: 1, quantity: 1, side: 'buy' });
const liquidation = (i: number): LiquidationEvent => ({ type: 'liquidation', ...base(i), liquidationId: String(i), price: 1, quantity: 1, positionSide: 'long' });
const book = (i: number, market: string, levels = 1): BookEvent => ({
  type: 'book', ...base(i, market),
  bids: Array.from({ length: levels }, (_, k) => [100 - k - i / 1e6, 1] as [number, number]),
  asks: Array.from({ length: levels }, (_, k) => [101 + k, 1] as [number, number]),
});
const tick = () => new Promise((r) => setTimeout(r, 10));
const tradeIds = (records: BusRecord<'trades'>[]) => records.map((r) => r.event.tradeId);

/** A logger whose lines the test reads. */
function recordingLog() {
  const lines: Record<string, unknown>[] = [];
  const log = pino({ level: 'info' }, { write: (s: string) => void lines.push(JSON.parse(s)) });
  return { log, lines };
}

afterEach(() => vi.useRealTimers());

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

test('every event refused at the bound goes to the refusal listeners, as it is refused; a book conflated is not refused', async () => {
  const bus = createMemoryBus({ maxRecordsPerTopic: 3 });
  await bus.subscribe({ group: 'stuck', topics: ['trades', 'books'], onBatch: async () => {} });
  const refused: string[] = [];
  const stop = bus.onRefused((events) => refused.push(...events.map((e) => (e.type === 'trade' ? `t${e.tradeId}` : e.type))));
  bus.publish([trade(1), trade(2), trade(3), trade(4), trade(5)]);
  bus.publish([book(1, 'A'), book(2, 'B'), book(3, 'C'), book(4, 'C')]);
  expect(refused).toEqual(['t4', 't5']);
  stop();
  bus.publish([trade(6)]);
  expect(refused).toEqual(['t4', 't5']);
  expect(bus.stats().topics.trades).toMatchObject({ published: 3, dropped: 3 });
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
      got.push(...tradeIds(records));
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
  await bus.subscribe({ group: 'gone', topics: ['trades'], onBatch: async (records: BusRecord<'trades'>[]) => void back.push(...tradeIds(records)) });
  bus.publish([trade(500)]);
  await tick();
  expect(back).toEqual(['500']);
  await bus.close();
});

test('what the bus holds falls exactly as the slowest running group reading the topic commits, and as groups stop', async () => {
  const bus = createMemoryBus();
  const handed = new Map<string, BusRecord<'trades'>[]>();
  const reader = (group: string) =>
    bus.subscribe({ group, topics: ['trades'], onBatch: async (records: BusRecord<'trades'>[]) => void handed.set(group, [...(handed.get(group) ?? []), ...records]) });
  const a = await reader('a');
  const b = await reader('b');
  // Reads another topic and never commits: it holds no trade back.
  await bus.subscribe({ group: 'liquidations', topics: ['liquidations'], onBatch: async () => {} });
  bus.publish([0, 1, 2, 3, 4, 5].map((i) => trade(i)));
  await tick();
  const held = () => bus.stats().topics.trades.heldRecords;
  const commitThrough = (sub: Subscription, group: string, n: number) => sub.commit(commitPositionsAfter(handed.get(group)!.slice(0, n)));
  expect(held()).toBe(6);
  await commitThrough(a, 'a', 4);
  expect(held()).toBe(6);
  await commitThrough(b, 'b', 2);
  expect(held()).toBe(4);
  // `b` stops at 2: only `a`, at 4, holds now.
  await b.stop();
  expect(held()).toBe(2);
  await commitThrough(a, 'a', 6);
  expect(held()).toBe(0);
  // The last reader stops with two it did not commit: with no group reading, they wait for the next.
  bus.publish([trade(6), trade(7)]);
  await tick();
  await a.stop();
  expect(held()).toBe(2);
  await bus.close();
});

test('at the bound a trade is refused even when a book of its market is held', async () => {
  const bus = createMemoryBus({ maxRecordsPerTopic: 1 });
  bus.publish([book(0, 'BTCUSDT'), trade(0), trade(1)]);
  expect(bus.stats().topics.trades).toMatchObject({ published: 1, conflated: 0, dropped: 1 });
  expect(bus.stats().topics.books).toMatchObject({ published: 1, heldBytes: heldBytesOf(book(0, 'BTCUSDT')) });
  await bus.close();
});

test('a book whose market\'s newest book was already released is refused at the bound, not written over another market\'s', async () => {
  const bus = createMemoryBus({ maxRecordsPerTopic: 2 });
  const sub = await bus.subscribe({
    group: 'g',
    topics: ['books'],
    onBatch: async (records: BusRecord<'books'>[]) => {
      await sub.commit(commitPositionsAfter(records));
    },
  });
  bus.publish([book(0, 'M')]);
  await tick();
  await sub.stop();
  // M's book is committed and released; with no group reading, A and B fill the topic.
  bus.publish([book(1, 'A'), book(1, 'B'), book(2, 'M')]);
  expect(bus.stats().topics.books).toMatchObject({ published: 3, conflated: 0, dropped: 1, heldRecords: 2 });
  const held: string[] = [];
  await bus.subscribe({ group: 'later', topics: ['books'], onBatch: async (records: BusRecord<'books'>[]) => void held.push(...records.map((r) => r.event.market)) });
  await tick();
  expect(held).toEqual(['A', 'B']);
  await bus.close();
});

test('a member that stopped no longer keeps a book it was handed from being replaced', async () => {
  const bus = createMemoryBus({ maxRecordsPerTopic: 2 });
  // `slow` holds its first batch: it is never handed M's first book.
  let resume: () => void = () => {};
  const slowGot: BookEvent[] = [];
  await bus.subscribe({
    group: 'slow',
    topics: ['books'],
    onBatch: async (records: BusRecord<'books'>[]) => {
      slowGot.push(...records.map((r) => r.event));
      if (slowGot.length === 1) await new Promise<void>((r) => (resume = r));
    },
  });
  bus.publish([book(0, 'X')]);
  const brief = await bus.subscribe({ group: 'brief', topics: ['books'], onBatch: async () => {} });
  await tick();
  bus.publish([book(0, 'M')]);
  await tick();
  await brief.stop();
  bus.publish([book(1, 'M')]);
  expect(bus.stats().topics.books).toMatchObject({ published: 2, conflated: 1, dropped: 0 });
  resume();
  await tick();
  expect(slowGot.map((b) => [b.market, b.ts])).toEqual([['X', base(0).ts], ['M', base(1).ts]]);
  await bus.close();
});

test('when the last group reading a topic stops, what it did not commit stays held for the next group', async () => {
  const bus = createMemoryBus();
  const only = await bus.subscribe({ group: 'only', topics: ['trades'], onBatch: async () => {} });
  bus.publish([trade(0), trade(1)]);
  await tick();
  await only.stop();
  expect(bus.stats().topics.trades.heldRecords).toBe(2);
  const next: string[] = [];
  await bus.subscribe({ group: 'next', topics: ['trades'], onBatch: async (records: BusRecord<'trades'>[]) => void next.push(...tradeIds(records)) });
  await tick();
  expect(next).toEqual(['0', '1']);
  await bus.close();
});

test('the lag warning names the running group furthest behind on that topic: not one on another topic, not one that stopped', async () => {
  const { log, lines } = recordingLog();
  const bus = createMemoryBus({ maxRecordsPerTopic: 10, log });
  // As far behind on trades as `trades-reader`, but stopped: it holds nothing back.
  const stopped = await bus.subscribe({ group: 'stopped', topics: ['trades'], onBatch: async () => {} });
  // Further behind, on liquidations.
  await bus.subscribe({ group: 'liquidations-reader', topics: ['liquidations'], onBatch: async () => {} });
  await bus.subscribe({ group: 'trades-reader', topics: ['trades'], onBatch: async () => {} });
  await stopped.stop();
  bus.publish([...[0, 1, 2, 3, 4].map((i) => trade(i)), ...[0, 1, 2, 3, 4, 5, 6, 7].map((i) => liquidation(i))]);
  // Trades are checked first; the warning at most once a minute keeps the liquidations one back.
  expect(lines.filter((l) => l.msg === 'bus consumer falling behind: the topic is past half its bound')).toEqual([
    expect.objectContaining({ topic: 'trades', group: 'trades-reader', lag: 5 }),
  ]);
  await bus.close();
});

test('a group that subscribes again resumes at its own commit while another group still holds older records', async () => {
  const bus = createMemoryBus();
  await bus.subscribe({ group: 'holder', topics: ['trades'], onBatch: async () => {} });
  const first: BusRecord<'trades'>[] = [];
  const sub = await bus.subscribe({ group: 'g', topics: ['trades'], onBatch: async (records: BusRecord<'trades'>[]) => void first.push(...records) });
  bus.publish([0, 1, 2, 3].map((i) => trade(i)));
  await tick();
  await sub.commit(commitPositionsAfter(first.slice(0, 2)));
  await sub.stop();
  expect(bus.stats().topics.trades.heldRecords).toBe(4);
  const again: string[] = [];
  await bus.subscribe({ group: 'g', topics: ['trades'], onBatch: async (records: BusRecord<'trades'>[]) => void again.push(...tradeIds(records)) });
  await tick();
  expect(again).toEqual(['2', '3']);
  await bus.close();
});

test('a group that starts at latest is handed what is published after it joined, on each of its topics; a default group everything held', async () => {
  const bus = createMemoryBus();
  bus.publish([trade(0), liquidation(0), book(0, 'M')]);
  const live: string[] = [];
  await bus.subscribe({
    group: 'live',
    topics: ['trades', 'liquidations'],
    start: 'latest',
    onBatch: async (records: BusRecord<'trades' | 'liquidations'>[]) => void live.push(...records.map((r) => `${r.topic} ${r.offset}`)),
  });
  bus.publish([trade(1), liquidation(1)]);
  await tick();
  expect(live).toEqual(['trades 1', 'liquidations 1']);
  const durable: string[] = [];
  await bus.subscribe({ group: 'durable', topics: ['trades'], onBatch: async (records: BusRecord<'trades'>[]) => void durable.push(...tradeIds(records)) });
  // `latest` applied to the topics `live` joined with: a member that adds books, where the group
  // has no commit, starts where its own `start` says (the oldest held), as Kafka's fromBeginning.
  const books: number[] = [];
  await bus.subscribe({ group: 'live', topics: ['books'], onBatch: async (records: BusRecord<'books'>[]) => void books.push(...records.map((r) => r.offset)) });
  await tick();
  expect(durable).toEqual(['0', '1']);
  expect(books).toEqual([0]);
  await bus.close();
});

test('a batch holds at most maxBatch records, counted across partitions', async () => {
  const bus = createMemoryBus({ partitions: 2, maxBatch: 3 });
  const batches: BusRecord<'trades'>[][] = [];
  await bus.subscribe({ group: 'g', topics: ['trades'], onBatch: async (records: BusRecord<'trades'>[]) => void batches.push(records) });
  // Two per asset: whichever partition is read first, the second one fills the batch's last place.
  bus.publish([trade(0, 'ethereum'), trade(1, 'ethereum'), trade(2, 'bitcoin'), trade(3, 'bitcoin')]);
  await tick();
  const delivered = batches.flat();
  expect(new Set(delivered.map((r) => r.partition)).size).toBe(2);
  expect(batches.map((b) => b.length)).toEqual([3, 1]);
  expect(tradeIds(delivered).sort()).toEqual(['0', '1', '2', '3']);
  await bus.close();
});

test('a member whose first batch filled up on one partition reads the next one from its group\'s commit at that time', async () => {
  const bus = createMemoryBus({ partitions: 2, maxBatch: 1 });
  // Holds the log, so what `g` commits stays there to be handed again.
  await bus.subscribe({ group: 'holder', topics: ['trades'], onBatch: async () => {} });
  bus.publish([trade(0, 'ethereum'), trade(1, 'bitcoin')]);
  // `first` is handed one partition's trade, a full batch, and holds it...
  let resume: () => void = () => {};
  const firstGot: BusRecord<'trades'>[] = [];
  await bus.subscribe({
    group: 'g',
    topics: ['trades'],
    onBatch: async (records: BusRecord<'trades'>[]) => {
      firstGot.push(...records);
      if (firstGot.length === 1) await new Promise<void>((r) => (resume = r));
    },
  });
  // ...while a second member of the group reads and commits both partitions (its first batch
  // comes before subscribe returns: it waits for the handle).
  let subscribed: (s: Subscription) => void = () => {};
  const handle = new Promise<Subscription>((r) => (subscribed = r));
  const secondGot: BusRecord<'trades'>[] = [];
  subscribed(await bus.subscribe({
    group: 'g',
    topics: ['trades'],
    onBatch: async (records: BusRecord<'trades'>[]) => {
      secondGot.push(...records);
      await (await handle).commit(commitPositionsAfter(records));
    },
  }));
  await tick();
  expect(new Set(secondGot.map((r) => r.partition)).size).toBe(2);
  resume();
  await tick();
  expect(firstGot).toHaveLength(1);
  await bus.close();
});

/** A reader that commits its first batch and fails its second: the trade ids of each batch it is handed, at 199 and at 200 ms after the failure. */
async function failingSecondBatch(log?: Logger): Promise<{ before: string[][]; after: string[][] }> {
  vi.useFakeTimers({ toFake: ['setTimeout'] });
  const bus = createMemoryBus({ log });
  const handed: string[][] = [];
  const sub = await bus.subscribe({
    group: 'flaky',
    topics: ['trades'],
    onBatch: async (records: BusRecord<'trades'>[]) => {
      handed.push(tradeIds(records));
      if (handed.length === 1) await sub.commit(commitPositionsAfter(records));
      if (handed.length === 2) throw new Error('insert failed');
    },
  });
  bus.publish([trade(0), trade(1)]);
  await vi.advanceTimersByTimeAsync(0);
  bus.publish([trade(2), trade(3)]);
  await vi.advanceTimersByTimeAsync(0);
  bus.publish([trade(4)]);
  await vi.advanceTimersByTimeAsync(199);
  const before = [...handed];
  await vi.advanceTimersByTimeAsync(1);
  await bus.close();
  return { before, after: handed };
}

test('a failed batch is handed again from the group\'s commit 200 ms later, with what came meanwhile, and logged as a warning', async () => {
  const { log, lines } = recordingLog();
  const { before, after } = await failingSecondBatch(log);
  expect(before).toEqual([['0', '1'], ['2', '3']]);
  expect(after).toEqual([['0', '1'], ['2', '3'], ['2', '3', '4']]);
  expect(lines).toEqual([
    expect.objectContaining({ level: 40, group: 'flaky', err: expect.objectContaining({ message: 'insert failed' }), msg: 'consumer batch failed; redelivering from the committed position' }),
  ]);
});

test('without a logger a failed batch is handed again all the same', async () => {
  const { after } = await failingSecondBatch();
  expect(after).toEqual([['0', '1'], ['2', '3'], ['2', '3', '4']]);
});

/** FNV-1a (32 bits) of `text`'s UTF-16 code units, in BigInt arithmetic: the partition rule, computed apart from the bus's own code. */
function fnv1a(text: string): bigint {
  let h = 0x811c9dc5n;
  for (const unit of Array.from({ length: text.length }, (_, i) => text.charCodeAt(i))) h = ((h ^ BigInt(unit)) * 0x01000193n) & 0xffffffffn;
  return h;
}

test('an asset\'s events all go to partition FNV-1a(asset) mod partitions, and members may not run in other processes', async () => {
  const partitions = 5;
  const bus = createMemoryBus({ partitions });
  expect(bus.membersAcrossProcesses).toBe(false);
  const assets = ['bitcoin', 'ethereum', 'solana', 'dogecoin', 'cardano', 'x', 'a-much-longer-asset-id--venue'];
  const expected = Object.fromEntries(assets.map((a) => [a, Number(fnv1a(a) % BigInt(partitions))]));
  // The assets spread over more than one partition, so a rule that put every asset in one would fail.
  expect(new Set(Object.values(expected)).size).toBeGreaterThan(2);
  const got: Record<string, Set<number>> = {};
  await bus.subscribe({
    group: 'partitions',
    topics: ['trades'],
    onBatch: async (records: BusRecord<'trades'>[]) => {
      for (const r of records) (got[r.event.asset] ??= new Set()).add(r.partition);
    },
  });
  bus.publish(assets.flatMap((asset) => [trade(1, asset), trade(2, asset)]));
  await until(() => Object.keys(got).length === assets.length, 'every asset delivered');
  expect(Object.fromEntries(Object.entries(got).map(([a, p]) => [a, [...p]]))).toEqual(Object.fromEntries(assets.map((a) => [a, [expected[a]]])));
  await bus.close();
});
