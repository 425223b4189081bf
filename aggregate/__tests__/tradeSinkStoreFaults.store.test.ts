// The trade sink against a real chDB store that refuses inserts, times them out, and loses the answer
// to an insert that landed, then recovers: every trade stored once, no bus position committed before
// its trades were stored, and the sink's counters agree with what the store was made to do.
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { Bus, Subscription } from '../../infra/bus/bus.ts';
import { createMemoryBus } from '../../infra/bus/memoryBus.ts';
import type { TradeEvent } from '../../infra/events.ts';
import { StoreTimeoutError, type Store } from '../../infra/store.ts';
import { withStoreFaults } from '../../infra/storeFaults.ts';
import { openTestStore, silentLog } from '../../test/support/harness.ts';
import { until } from '../../test/support/until.ts';
import { startTradeSink } from '../tradeSink.ts';

let store: Store;
let dispose: () => Promise<void>;
beforeAll(async () => ({ store, dispose } = await openTestStore()));
afterAll(async () => dispose());

const asset = 'faultcoin';

/** Trades of two venues that number their trades alike: only venue + market + id identifies one. */
function tradesFrom(first: number, n: number): TradeEvent[] {
  return Array.from({ length: n }, (_, k) => {
    const i = first + k;
    const venue = i % 2 ? 'alpha' : 'beta';
    const ts = Date.UTC(2026, 1, 2, 10) + i * 250;
    return {
      type: 'trade', venue, market: 'FAULTUSDT', asset, quote: 'USDT', tradeId: String(Math.floor(i / 2)),
      price: 100 + (i % 7), quantity: 1 + (i % 3), side: 'buy', ts, receivedAt: ts + 40,
    };
  });
}

const keyOf = (venue: string, market: string, id: string) => `${venue}/${market}/${id}`;

async function storedKeys(): Promise<string[]> {
  const rows = await store.rows<{ venue: string; market: string; trade_id: string }>(
    'SELECT venue, market, trade_id FROM trades WHERE asset = {asset:String}',
    { asset },
  );
  return rows.map((r) => keyOf(r.venue, r.market, r.trade_id));
}

/**
 * The real bus, seen from the side: every record handed to the sink, and at each commit whether
 * every record before the committed position is already in the store.
 */
function watchedBus(bus: Bus) {
  const delivered: { partition: number; offset: number; key: string }[] = [];
  const commitsBeforeStored: string[] = [];
  let commits = 0;
  const watched: Bus = {
    ...bus,
    async subscribe(opts) {
      const sub: Subscription = await bus.subscribe({
        ...opts,
        onBatch: async (records) => {
          for (const r of records) delivered.push({ partition: r.partition, offset: r.offset, key: keyOf(r.event.venue, r.event.market, (r.event as TradeEvent).tradeId) });
          await opts.onBatch(records);
        },
      });
      return {
        async commit(positions) {
          commits += 1;
          const stored = new Set(await storedKeys());
          for (const p of positions)
            for (const d of delivered) if (d.partition === p.partition && d.offset < p.offset && !stored.has(d.key)) commitsBeforeStored.push(d.key);
          await sub.commit(positions);
        },
        stop: () => sub.stop(),
      };
    },
  };
  return { bus: watched, commitsBeforeStored, commits: () => commits };
}

test('refused, timed-out and answer-lost inserts: every trade stored once, committed only after, counted', async () => {
  const memoryBus = createMemoryBus();
  const watched = watchedBus(memoryBus);
  // Inserts and queries faulted apart, so that an insert can hang after its dedupe query passed;
  // short deadlines, so a hung call fails in the test's time.
  const insertFaults = withStoreFaults(store, { insertTimeoutMs: 300 });
  const queryFaults = withStoreFaults(store, { queryTimeoutMs: 300 });
  // Around the faults: counts every call the sink saw fail, and can lose the answer of an insert that landed.
  // Once the store is back, inserts go to it with its usual deadline: a real one past 300 ms is not a fault here.
  let insertsTo = insertFaults.store;
  let rejected = 0;
  let loseAnswers = 0;
  let lostRows = 0;
  /** Tokens sent, and how many inserts went out under a token sent before (a repeat). */
  const tokensSent = new Set<string>();
  let sentAgain = 0;
  const sinkStore: Store = {
    ...store,
    async insert(table, rows, token) {
      if (token !== undefined && tokensSent.has(token)) sentAgain += 1;
      if (token !== undefined) tokensSent.add(token);
      try {
        await insertsTo.insert(table, rows, token);
      } catch (err) {
        rejected += 1;
        throw err;
      }
      if (loseAnswers > 0) {
        loseAnswers -= 1;
        rejected += 1;
        lostRows += rows.length;
        throw new StoreTimeoutError('insert', 300);
      }
    },
    rows: <T>(query: string, params?: Record<string, unknown>) =>
      queryFaults.store.rows<T>(query, params).catch((err: unknown) => {
        rejected += 1;
        throw err;
      }),
  };
  const sink = await startTradeSink({ bus: watched.bus, store: sinkStore, log: silentLog, batchRows: 40, batchMs: 20, group: 'faults' });
  const lag = () => memoryBus.stats().lags.find((l) => l.group === 'faults')?.records ?? 0;

  // Refused: inserts fail at once.
  insertFaults.set('failinsert');
  memoryBus.publish(tradesFrom(0, 120));
  await until(() => sink.stats().failedBatches >= 3, 'three refused inserts');
  expect(await storedKeys()).toEqual([]);
  expect(watched.commits()).toBe(0);
  expect(lag()).toBe(120);

  // Hung inserts, then hung queries: each call times out (the deadline fires; nothing reaches the engine).
  insertFaults.set('hang');
  memoryBus.publish(tradesFrom(120, 120));
  const insertsBefore = insertFaults.calls().inserts;
  await until(() => insertFaults.calls().inserts >= insertsBefore + 2, 'two timed-out inserts');
  insertFaults.set('ok');
  queryFaults.set('hang');
  const queriesBefore = queryFaults.calls().queries;
  await until(() => queryFaults.calls().queries >= queriesBefore + 2, 'two timed-out queries');
  expect(await storedKeys()).toEqual([]);
  expect(watched.commits()).toBe(0);

  // Back, but the first insert's answer is lost after it landed: the retry finds the rows and adds nothing.
  // The last trades come with 40 already sent (a collector's overlap), mixing held and new in one batch.
  loseAnswers = 1;
  insertsTo = store;
  queryFaults.set('ok');
  memoryBus.publish(tradesFrom(200, 100));
  await until(async () => lag() === 0 && sink.stats().received === 340, 'everything committed');
  await sink.stop();
  await memoryBus.close();

  const stored = await storedKeys();
  const expected = tradesFrom(0, 300).map((t) => keyOf(t.venue, t.market, t.tradeId));
  expect(stored.length).toBe(300);
  expect(new Set(stored)).toEqual(new Set(expected));
  expect(watched.commitsBeforeStored).toEqual([]);
  expect(watched.commits()).toBeGreaterThan(0);
  // Each trade inserted once by a call that answered, except those found already held after the insert
  // whose answer was lost; the rest of what was received is duplicates.
  expect(lostRows).toBeGreaterThan(0);
  expect(sink.stats()).toEqual({ received: 340, inserted: 300 - lostRows, duplicates: 40 + lostRows, batches: expect.any(Number), failedBatches: rejected, repeatedInserts: sentAgain });
  // Refused and timed-out inserts were sent again as they were.
  expect(sentAgain).toBeGreaterThanOrEqual(3);
  expect(rejected).toBeGreaterThanOrEqual(8);
});
