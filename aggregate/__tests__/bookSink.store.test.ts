// The book sink commits books as it receives them, not after it stores them: the bus holds none
// between inserts, also while the store refuses them (books are superseded by newer ones); the next
// insert that works stores the newest. A stop once the store has failed does not try it again.
import { pino } from 'pino';
import { afterAll, beforeAll, beforeEach, expect, test } from 'vitest';
import { openTestStore, silentLog } from '../../test/support/harness.ts';
import { until } from '../../test/support/until.ts';
import { createMemoryBus } from '../../infra/bus/memoryBus.ts';
import type { BookEvent } from '../../infra/events.ts';
import type { Store } from '../../infra/store.ts';
import { startBookSink } from '../bookSink.ts';

let db: Awaited<ReturnType<typeof openTestStore>>;
beforeAll(async () => {
  db = await openTestStore();
});
afterAll(async () => {
  await db?.dispose();
});
beforeEach(async () => {
  await db.store.client.command({ query: 'TRUNCATE TABLE market_quality' });
});

const book = (i: number): BookEvent => ({
  type: 'book', venue: 'kraken', market: 'XBT/USD', asset: 'bitcoin', quote: 'USD', ts: 1_700_000_000_000 + i * 1_000, receivedAt: 1_700_000_000_000 + i * 1_000,
  bids: [[100 - i / 100, 1]], asks: [[101, 1]],
});

test('books are committed as they are received: between two inserts the bus holds none, and the stop stores the newest of each market', async () => {
  const bus = createMemoryBus();
  // No insert before the stop: whatever the bus releases was committed on receipt.
  const sink = await startBookSink({ bus, store: db.store, log: silentLog, everyMs: 60 * 60_000 });
  const markets = ['XBT/USD', 'ETH/USD', 'SOL/USD'];
  for (let i = 0; i < 300; i++) bus.publish([{ ...book(i), market: markets[i % 3]! }]);
  const books = () => bus.stats().topics.books;
  await until(() => books().heldRecords === 0, 'the bus to release every book before any insert', { context: () => JSON.stringify(books()) });
  expect(bus.stats().lags.find((l) => l.group === 'aggregate-books')?.records ?? 0).toBe(0);
  expect(await db.store.rows('SELECT 1 FROM market_quality')).toEqual([]);
  await sink.stop();
  const rows = await db.store.rows<{ market: string; ts: number }>('SELECT market, toUnixTimestamp64Milli(ts) AS ts FROM market_quality FINAL ORDER BY market');
  // The newest book of each market: i = 299, 298, 297 (markets[i % 3]).
  expect(rows).toEqual([
    { market: 'ETH/USD', ts: book(298).ts },
    { market: 'SOL/USD', ts: book(299).ts },
    { market: 'XBT/USD', ts: book(297).ts },
  ]);
  await bus.close();
});

test('while market_quality inserts fail the sink still commits, so no book is held; once they work, the newest book is stored', async () => {
  let refuse = true;
  // The real store, with its market_quality inserts refused while `refuse` holds (a full disk, say).
  const store: Store = {
    ...db.store,
    insert: async (table, rows, token) => {
      if (refuse && table === 'market_quality') throw new Error('refused');
      return db.store.insert(table, rows, token);
    },
  };
  const bus = createMemoryBus({ maxRecordsPerTopic: 50 });
  const sink = await startBookSink({ bus, store, log: silentLog, everyMs: 20 });
  // 20 times the bound while every insert fails, 40 books at a time, each 40 once the sink has committed
  // the ones before: a sink that did not commit would fill the topic and refuse books.
  const books = () => bus.stats().topics.books;
  const committed = () => books().heldRecords === 0 || books().dropped > 0;
  for (let i = 0; i < 1_000; i++) {
    bus.publish([book(i)]);
    if (i % 40 === 39) await until(committed, `the sink to commit the books up to ${i}, its inserts refused`, { timeoutMs: 5_000, everyMs: 5, context: () => JSON.stringify(books()) });
  }
  expect(bus.stats().topics.books.dropped).toBe(0);
  expect(bus.stats().topics.books.heldRecords).toBeLessThan(50);
  refuse = false;
  bus.publish([book(1_000)]);
  await until(async () => (await db.store.rows('SELECT 1 FROM market_quality')).length > 0, 'a market_quality row once inserts work');
  const rows = await db.store.rows<{ ts: number }>('SELECT toUnixTimestamp64Milli(ts) AS ts FROM market_quality');
  expect(rows).toEqual([{ ts: book(1_000).ts }]);
  await sink.stop();
  await bus.close();
});

test('once an insert has failed, a stop does not try the store again: the newest books are not measured, logged', async () => {
  let inserts = 0;
  const store: Store = {
    ...db.store,
    insert: async () => {
      inserts += 1;
      throw new Error('refused');
    },
  };
  const lines: { level: number; msg: string; markets?: number }[] = [];
  const log = pino({ level: 'warn' }, { write: (s: string) => void lines.push(JSON.parse(s)) });
  const bus = createMemoryBus();
  const sink = await startBookSink({ bus, store, log, everyMs: 20 });
  bus.publish([book(0)]);
  await until(() => inserts === 1, 'a refused insert');
  // A newer book, delivered while the sink stops: no insert is tried for it.
  bus.publish([book(1)]);
  await sink.stop();
  expect(inserts).toBe(1);
  expect(lines.at(-1)).toEqual(expect.objectContaining({ level: 50, msg: 'stopped with the store failing: the newest books of these markets were not measured', markets: 1 }));
  await bus.close();
});
