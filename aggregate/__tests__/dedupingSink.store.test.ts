// The deduping sink (aggregate/dedupingSink.ts) on a real chDB store and the in-process bus: what
// it drops, what it reports, when it flushes, how it retries and what it commits. Kept fast: the
// mutation run repeats this file for every mutant of the sink. Where a test holds the clock
// (fake Date and setInterval), the sink's timer ticks every max(10, batchMs / 4) ms from its start
// and the test steps through those ticks one by one.
import { setTimeout as sleep } from 'node:timers/promises';
import { pino } from 'pino';
import { afterAll, afterEach, beforeAll, expect, test, vi } from 'vitest';
import type { Bus } from '../../infra/bus/bus.ts';
import { createMemoryBus } from '../../infra/bus/memoryBus.ts';
import type { TradeEvent } from '../../infra/events.ts';
import { StoreTimeoutError, type Store } from '../../infra/store.ts';
import { withStoreFaults } from '../../infra/storeFaults.ts';
import { openTestStore, silentLog } from '../../test/support/harness.ts';
import type { DedupingSink, InsertedRange } from '../dedupingSink.ts';
import { startTradeSink, tradeRow } from '../tradeSink.ts';
import { until as untilHolds } from '../../test/support/until.ts';

let store: Store;
let dispose: () => Promise<void>;
beforeAll(async () => ({ store, dispose } = await openTestStore()));
afterAll(async () => dispose());
afterEach(() => vi.useRealTimers());

const t0 = Date.UTC(2026, 2, 3, 12);

/** One trade on venue `alpha`; each test has its own asset, so its rows are its own. */
function trade(asset: string, tradeId: string, ts: number, receivedAt = ts + 40): TradeEvent {
  return { type: 'trade', venue: 'alpha', market: `${asset.toUpperCase()}USDT`, asset, quote: 'USDT', tradeId, price: 100, quantity: 1, side: 'buy', ts, receivedAt };
}

/** What the `trades` table holds for an asset, times in unix ms. */
function storedTrades(asset: string) {
  return store.rows<{ id: string; ts: number; receivedAt: number }>(
    `SELECT trade_id AS id, toUnixTimestamp64Milli(ts) AS ts, toUnixTimestamp64Milli(received_at) AS receivedAt
     FROM trades WHERE asset = {asset:String} ORDER BY ts, trade_id`,
    { asset },
  );
}

/** Polls in real time (performance.now, as the shared one does): some tests hold `Date`. */
const until = (cond: () => boolean, what: string) => untilHolds(cond, what, { timeoutMs: 5_000, everyMs: 5 });

const lagOf = (bus: Bus, group: string) => bus.stats().lags.find((l) => l.group === group && l.topic === 'trades')?.records;

/** Held clock: fires the sink's ticks due within `ms`, then lets what they started reach the store. */
async function advance(ms: number): Promise<void> {
  vi.advanceTimersByTime(ms);
  await sleep(30);
}

const holdClock = () => vi.useFakeTimers({ toFake: ['Date', 'setInterval', 'clearInterval'] });

interface LogLine {
  level: number;
  msg: string;
  table?: string;
  events?: number;
  err?: { message: string };
}

function recordingLog() {
  const lines: LogLine[] = [];
  const log = pino({ level: 'warn' }, { write: (s: string) => void lines.push(JSON.parse(s) as LogLine) });
  return { log, lines };
}

type InsertOutcome = 'lands' | 'answerLost' | 'answerLostLandsLate';

/**
 * The real store, counting the sink's queries (its lookups), with the next insert held until the
 * test lets it go: then it lands; or it lands and its answer is lost (the caller's deadline passed
 * first); or its answer is lost and it lands only just before the following insert (the engine
 * finished it after the caller's deadline).
 */
function withHeldInsert(base: Store) {
  let lookups = 0;
  let holdNext = false;
  let release: ((outcome: InsertOutcome) => void) | undefined;
  let landLate: (() => Promise<void>) | undefined;
  const wrapped: Store = {
    ...base,
    rows<T>(query: string, params?: Record<string, unknown>) {
      lookups += 1;
      return base.rows<T>(query, params);
    },
    async insert(table, rows, token) {
      if (holdNext) {
        holdNext = false;
        const outcome = await new Promise<InsertOutcome>((resolve) => (release = resolve));
        release = undefined;
        if (outcome === 'answerLostLandsLate') {
          landLate = () => base.insert(table, rows, token);
          throw new StoreTimeoutError('insert', 300);
        }
        if (outcome === 'answerLost') {
          await base.insert(table, rows, token);
          throw new StoreTimeoutError('insert', 300);
        }
      }
      if (landLate) {
        await landLate();
        landLate = undefined;
      }
      await base.insert(table, rows, token);
    },
  };
  return {
    store: wrapped,
    lookups: () => lookups,
    holdNextInsert: () => void (holdNext = true),
    holding: () => release !== undefined,
    release: (outcome: InsertOutcome) => release?.(outcome),
  };
}

/**
 * The in-process bus with partition assignment in the test's hands, as Kafka's is in the broker's:
 * a member's first assignment comes only when the test calls `assign` (Kafka joins the group after
 * `subscribe` resolved), and every later call is a rebalance.
 */
function withAssignments(base: Bus) {
  const onAssignments: (() => void)[] = [];
  const bus: Bus = {
    ...base,
    subscribe(opts) {
      const { onAssignment, ...rest } = opts;
      if (onAssignment) onAssignments.push(onAssignment);
      return base.subscribe(rest);
    },
  };
  return { bus, assign: () => onAssignments.forEach((f) => f()) };
}

/** The in-process bus refusing every commit, as a broker that went away right after an insert. */
function withRefusedCommits(base: Bus): Bus {
  return {
    ...base,
    async subscribe(opts) {
      const subscription = await base.subscribe(opts);
      return {
        commit: async () => {
          throw new Error('commit refused');
        },
        stop: () => subscription.stop(),
      };
    },
  };
}

test('events held at the edges of the batch window, of every asset in it, and copies within the batch are dropped; onInserted gets the range of the rows stored and the first of each asset', async () => {
  const bus = createMemoryBus();
  const ranges: InsertedRange[] = [];
  const sink = await startTradeSink({ bus, store, log: silentLog, batchRows: 3, batchMs: 60_000, group: 'dd-lookup', onInserted: (r) => ranges.push(r) });
  const first = [trade('lookcoin', 'L1', t0 + 1_000), trade('peekcoin', 'P1', t0 + 2_000), trade('lookcoin', 'L3', t0 + 3_000)];
  bus.publish(first);
  await until(() => lagOf(bus, 'dd-lookup') === 0, 'the first batch committed');
  expect(sink.stats()).toEqual({ received: 3, inserted: 3, duplicates: 0, batches: 1, failedBatches: 0, repeatedInserts: 0 });

  // L1 and L3 are held at exactly this batch's first and last ts; P1 under the batch's other asset.
  bus.publish([
    trade('lookcoin', 'L1', t0 + 1_000),
    trade('lookcoin', 'N1', t0 + 1_500),
    trade('peekcoin', 'P1', t0 + 2_000),
    trade('lookcoin', 'N1', t0 + 1_500),
    trade('peekcoin', 'N2', t0 + 2_500),
    trade('lookcoin', 'L3', t0 + 3_000),
  ]);
  await until(() => lagOf(bus, 'dd-lookup') === 0, 'the second batch committed');
  expect(sink.stats()).toEqual({ received: 9, inserted: 5, duplicates: 4, batches: 2, failedBatches: 0, repeatedInserts: 0 });

  // Nothing new: no insert, so no onInserted.
  bus.publish(first);
  await until(() => lagOf(bus, 'dd-lookup') === 0, 'the replay committed');
  expect(sink.stats()).toEqual({ received: 12, inserted: 5, duplicates: 7, batches: 3, failedBatches: 0, repeatedInserts: 0 });

  // Nothing buffered: stopping makes no batch.
  await sink.stop();
  expect(sink.stats()).toEqual({ received: 12, inserted: 5, duplicates: 7, batches: 3, failedBatches: 0, repeatedInserts: 0 });
  expect(ranges).toEqual([
    { minTs: t0 + 1_000, maxTs: t0 + 3_000, firstByAsset: new Map([['lookcoin', t0 + 1_000], ['peekcoin', t0 + 2_000]]) },
    { minTs: t0 + 1_500, maxTs: t0 + 2_500, firstByAsset: new Map([['lookcoin', t0 + 1_500], ['peekcoin', t0 + 2_500]]) },
  ]);
  expect((await storedTrades('lookcoin')).map((r) => r.id)).toEqual(['L1', 'N1', 'L3']);
  expect((await storedTrades('peekcoin')).map((r) => r.id)).toEqual(['P1', 'N2']);
});

test('a full batch is inserted at once, and the next one is taken without a pause', async () => {
  const bus = createMemoryBus();
  const sink = await startTradeSink({ bus, store, log: silentLog, batchRows: 3, batchMs: 60_000, group: 'dd-rows' });
  bus.publish([trade('rowcoin', '1', t0), trade('rowcoin', '2', t0 + 1), trade('rowcoin', '3', t0 + 2)]);
  await until(() => sink.stats().inserted === 3, 'the full batch inserted without waiting for batchMs');
  const sentAt = performance.now();
  bus.publish([trade('rowcoin', '4', t0 + 3), trade('rowcoin', '5', t0 + 4), trade('rowcoin', '6', t0 + 5)]);
  await until(() => sink.stats().received === 6, 'the next batch delivered');
  // The sink pauses delivery (1 s) only while the store refuses, not after a batch that landed.
  expect(performance.now() - sentAt).toBeLessThan(900);
  await until(() => lagOf(bus, 'dd-rows') === 0, 'the next batch committed');
  await sink.stop();
  expect(sink.stats()).toEqual({ received: 6, inserted: 6, duplicates: 0, batches: 2, failedBatches: 0, repeatedInserts: 0 });
  expect(await storedTrades('rowcoin')).toHaveLength(6);
});

/** A trade sink of `group` on the in-process bus and the real store behind a fault switch, its log recorded. */
async function sinkWithFaults(group: string, batching: { batchRows: number; batchMs: number }) {
  const bus = createMemoryBus();
  const faults = withStoreFaults(store);
  const { log, lines } = recordingLog();
  const sink = await startTradeSink({ bus, store: faults.store, log, ...batching, group });
  return { bus, faults, lines, sink };
}

test('while the store refuses inserts, the sink retries once a second, holds delivery, and logs each failure', async () => {
  const { bus, faults, lines, sink } = await sinkWithFaults('dd-refused', { batchRows: 3, batchMs: 60_000 });
  faults.set('failinsert');
  bus.publish([trade('refusecoin', '1', t0), trade('refusecoin', '2', t0 + 1), trade('refusecoin', '3', t0 + 2)]);
  await until(() => sink.stats().failedBatches === 1, 'a refused insert');
  bus.publish([trade('refusecoin', '4', t0 + 3), trade('refusecoin', '5', t0 + 4), trade('refusecoin', '6', t0 + 5)]);
  await sleep(300);
  // Read while refused, checked once the store is back: a failed check leaves no sink retrying.
  const whileRefused = { stats: sink.stats(), lag: lagOf(bus, 'dd-refused'), lines: [...lines] };
  faults.set('ok');
  // Within the second: no second attempt, and the next batch is not taken.
  expect(whileRefused.stats).toEqual({ received: 3, inserted: 0, duplicates: 0, batches: 1, failedBatches: 1, repeatedInserts: 0 });
  expect(whileRefused.lag).toBe(6);
  expect(whileRefused.lines).toEqual([
    expect.objectContaining({ level: 50, msg: 'batch insert failed; will retry', table: 'trades', events: 3, err: expect.objectContaining({ message: 'injected store fault: failinsert' }) }),
  ]);

  await until(() => lagOf(bus, 'dd-refused') === 0, 'everything committed once the store is back');
  await sink.stop();
  expect(sink.stats()).toEqual({ received: 6, inserted: 6, duplicates: 0, batches: 3, failedBatches: 1, repeatedInserts: 1 });
  expect((await storedTrades('refusecoin')).map((r) => r.id)).toEqual(['1', '2', '3', '4', '5', '6']);
});

const leftUncommitted = 'stopped with the store failing: these events were not inserted and stay uncommitted on the bus (Kafka delivers them again at the next start; the in-process bus loses them with the process)';

/** A sink of `group` on the real store, started again after a stop: what it finds uncommitted, it stores. */
async function nextStartStores(bus: Bus, group: string, asset: string, ids: string[]): Promise<void> {
  const next = await startTradeSink({ bus, store, log: silentLog, batchRows: 1_000, batchMs: 20, group });
  await until(() => lagOf(bus, group) === 0, 'the next start to store what was left');
  await next.stop();
  expect(next.stats()).toMatchObject({ received: ids.length, inserted: ids.length });
  expect((await storedTrades(asset)).map((r) => r.id)).toEqual(ids);
}

test('once an insert has failed, a stop tries the store no more: what the sink holds stays uncommitted, logged, and the next start stores it', async () => {
  const { bus, faults, lines, sink } = await sinkWithFaults('dd-stop-failed', { batchRows: 1_000, batchMs: 20 });
  faults.set('fail');
  bus.publish([trade('stopcoin', '1', t0), trade('stopcoin', '2', t0 + 1), trade('stopcoin', '3', t0 + 2)]);
  await until(() => sink.stats().failedBatches >= 1, 'a refused insert');
  const calls = faults.calls();
  await sink.stop();
  expect(faults.calls()).toEqual(calls);
  expect(lines.at(-1)).toEqual(expect.objectContaining({ level: 50, msg: leftUncommitted, table: 'trades', events: 3 }));
  expect(lagOf(bus, 'dd-stop-failed')).toBe(3);
  await nextStartStores(bus, 'dd-stop-failed', 'stopcoin', ['1', '2', '3']);
});

test('a stop while the failing store holds delivery back ends at once, without another try', async () => {
  // A full batch waits for the store, retried once a second: the bus's delivery waits with it.
  const { bus, faults, lines, sink } = await sinkWithFaults('dd-stop-held', { batchRows: 3, batchMs: 60_000 });
  faults.set('fail');
  bus.publish([1, 2, 3, 4].map((i) => trade('heldcoin', String(i), t0 + i)));
  await until(() => sink.stats().failedBatches === 1, 'a refused insert');
  const calls = faults.calls();
  let stopped = false;
  const stopping = sink.stop().then(() => (stopped = true));
  await until(() => stopped, 'the stop, with the store still failing');
  await stopping;
  expect(faults.calls()).toEqual(calls);
  expect(lines.at(-1)).toEqual(expect.objectContaining({ level: 50, msg: leftUncommitted, table: 'trades', events: 4 }));
  await nextStartStores(bus, 'dd-stop-held', 'heldcoin', ['1', '2', '3', '4']);
});

test('an insert whose answer was lost lands late, after the retry looked: the retry carries the same token and adds nothing', async () => {
  const bus = createMemoryBus();
  const held = withHeldInsert(store);
  const sink = await startTradeSink({ bus, store: held.store, log: silentLog, batchRows: 1_000, batchMs: 20, group: 'dd-late' });
  held.holdNextInsert();
  bus.publish([trade('latecoin', '1', t0, t0 + 40)]);
  await until(held.holding, 'the first insert under way');
  // The same trade again, from a second collector that received it later, waits behind the insert.
  bus.publish([trade('latecoin', '1', t0, t0 + 90)]);
  await until(() => sink.stats().received === 2, 'the copy delivered');
  held.release('answerLostLandsLate');
  await until(() => lagOf(bus, 'dd-late') === 0, 'the retry committed');
  await sink.stop();
  expect(sink.stats()).toEqual({ received: 2, inserted: 1, duplicates: 1, batches: 2, failedBatches: 1, repeatedInserts: 1 });
  expect(await storedTrades('latecoin')).toEqual([{ id: '1', ts: t0, receivedAt: t0 + 40 }]);
});

test('an id is opaque: one that spells the identities of two other trades back to back is a trade of its own', async () => {
  const bus = createMemoryBus();
  const sink = await startTradeSink({ bus, store, log: silentLog, batchRows: 2, batchMs: 60_000, group: 'dd-opaque' });
  bus.publish([trade('opaquecoin', '1', t0), trade('opaquecoin', '2', t0 + 1)]);
  await until(() => lagOf(bus, 'dd-opaque') === 0, 'the first two committed');
  // Trade 1's id, then trade 2's venue, market and id, NUL-separated: nothing a venue sends, but an id is any string.
  const runTogether = '1alpha\u0000OPAQUECOINUSDT\u00002';
  bus.publish([trade('opaquecoin', runTogether, t0 + 2)]);
  await until(() => sink.stats().received === 3, 'the third delivered');
  // Below batchRows and batchMs: stopping inserts it and commits.
  await sink.stop();
  expect(lagOf(bus, 'dd-opaque')).toBe(0);
  expect(sink.stats()).toEqual({ received: 3, inserted: 3, duplicates: 0, batches: 2, failedBatches: 0, repeatedInserts: 0 });
  expect((await storedTrades('opaquecoin')).map((r) => r.id)).toEqual(['1', '2', runTogether]);
});

test('a commit that fails after the insert is logged, and the replay it causes is dropped as duplicates', async () => {
  const bus = createMemoryBus();
  const { log, lines } = recordingLog();
  const events = [trade('commitcoin', '1', t0), trade('commitcoin', '2', t0 + 1), trade('commitcoin', '3', t0 + 2)];
  const first = await startTradeSink({ bus: withRefusedCommits(bus), store, log, batchRows: 3, batchMs: 60_000, group: 'dd-commit' });
  bus.publish(events);
  await until(() => lines.length === 1, 'the failed commit logged');
  await first.stop();
  expect(first.stats()).toEqual({ received: 3, inserted: 3, duplicates: 0, batches: 1, failedBatches: 0, repeatedInserts: 0 });
  expect(lines).toEqual([
    expect.objectContaining({ level: 40, msg: 'commit after insert failed; the events will be replayed and skipped', table: 'trades', err: expect.objectContaining({ message: 'commit refused' }) }),
  ]);
  expect(lagOf(bus, 'dd-commit')).toBe(3);

  const next = await startTradeSink({ bus, store, log, batchRows: 3, batchMs: 60_000, group: 'dd-commit' });
  await until(() => lagOf(bus, 'dd-commit') === 0, 'the replay committed');
  await next.stop();
  expect(next.stats()).toEqual({ received: 3, inserted: 0, duplicates: 3, batches: 1, failedBatches: 0, repeatedInserts: 0 });
  expect((await storedTrades('commitcoin')).map((r) => r.id)).toEqual(['1', '2', '3']);
});

test('the timer flushes once the oldest buffered event has waited batchMs, not before, and a tick over an empty buffer does nothing', async () => {
  holdClock();
  const bus = createMemoryBus();
  const held = withHeldInsert(store);
  // No group given: the table's own.
  const sink = await startTradeSink({ bus, store: held.store, log: silentLog, batchRows: 1_000, batchMs: 40 });
  bus.publish([trade('tickcoin', '1', t0)]);
  await until(() => sink.stats().received === 1, 'the first event');
  await advance(30);
  // A later event does not postpone the first one's flush.
  bus.publish([trade('tickcoin', '2', t0 + 1)]);
  await until(() => sink.stats().received === 2, 'the second event');
  await advance(9);
  expect(held.lookups()).toBe(0);

  held.holdNextInsert();
  await advance(1);
  await until(held.holding, 'the flush at batchMs');
  expect(held.lookups()).toBe(1);
  // A tick while that insert runs finds the buffer empty; an event arriving now waits its own batchMs.
  await advance(10);
  bus.publish([trade('tickcoin', '3', t0 + 2)]);
  await until(() => sink.stats().received === 3, 'the third event');
  held.release('lands');
  await until(() => lagOf(bus, 'aggregate-trades') === 1, 'the first two committed');
  await advance(39);
  expect(held.lookups()).toBe(1);
  await advance(1);
  await until(() => lagOf(bus, 'aggregate-trades') === 0, 'the third flushed batchMs after it came');

  await sink.stop();
  // Stopped: no timer left behind.
  expect(vi.getTimerCount()).toBe(0);
  expect(sink.stats()).toEqual({ received: 3, inserted: 3, duplicates: 0, batches: 2, failedBatches: 0, repeatedInserts: 0 });
  expect((await storedTrades('tickcoin')).map((r) => r.id)).toEqual(['1', '2', '3']);
});

test('with a tiny batchMs the timer still wakes at most every 10 ms', async () => {
  holdClock();
  const bus = createMemoryBus();
  const held = withHeldInsert(store);
  const sink = await startTradeSink({ bus, store: held.store, log: silentLog, batchRows: 1_000, batchMs: 8, group: 'dd-tiny' });
  bus.publish([trade('tinycoin', '1', t0)]);
  await until(() => sink.stats().received === 1, 'the event');
  await advance(9);
  expect(held.lookups()).toBe(0);
  await advance(1);
  await until(() => lagOf(bus, 'dd-tiny') === 0, 'the flush at the first tick');
  await sink.stop();
  expect(sink.stats()).toEqual({ received: 1, inserted: 1, duplicates: 0, batches: 1, failedBatches: 0, repeatedInserts: 0 });
});

test('before its first assignment the sink is idle; a rebalance drops what it had buffered, uncommitted', async () => {
  holdClock();
  const memoryBus = createMemoryBus();
  const { bus, assign } = withAssignments(memoryBus);
  const held = withHeldInsert(store);
  const sink = await startTradeSink({ bus, store: held.store, log: silentLog, batchRows: 1_000, batchMs: 40, group: 'dd-assign' });
  await advance(100);
  expect(sink.stats()).toEqual({ received: 0, inserted: 0, duplicates: 0, batches: 0, failedBatches: 0, repeatedInserts: 0 });

  assign();
  memoryBus.publish([trade('assigncoin', '1', t0), trade('assigncoin', '2', t0 + 1)]);
  await until(() => sink.stats().received === 2, 'the events');
  await advance(30);
  // The partitions move: their uncommitted records go to the new owner, not into this sink's next insert.
  assign();
  await advance(100);
  await sink.stop();
  expect(held.lookups()).toBe(0);
  expect(sink.stats()).toEqual({ received: 2, inserted: 0, duplicates: 0, batches: 0, failedBatches: 0, repeatedInserts: 0 });
  expect(lagOf(memoryBus, 'dd-assign')).toBe(2);
  expect(await storedTrades('assigncoin')).toEqual([]);
});

/** Publishes a batch to the sink's group and waits until the sink has received and committed it. */
function deliveryTo(bus: Bus, sink: DedupingSink, group: string) {
  return async (batch: TradeEvent[], what: string) => {
    const received = sink.stats().received + batch.length;
    bus.publish(batch);
    await until(() => sink.stats().received === received && lagOf(bus, group) === 0, what);
  };
}

/** Trades stored by another writer: an earlier run, or another member while the market's partition was assigned elsewhere. */
async function writtenElsewhere(...events: TradeEvent[]): Promise<void> {
  await store.insert('trades', events.map(tradeRow));
}

test('in order, a market asks the table once: later events are new for sure; one no later than what it holds is looked up, one at that very time is known', async () => {
  const bus = createMemoryBus();
  const held = withHeldInsert(store);
  const sink = await startTradeSink({ bus, store: held.store, log: silentLog, batchRows: 2, batchMs: 60_000, group: 'dd-bound' });
  const delivered = deliveryTo(bus, sink, 'dd-bound');
  await delivered([trade('boundcoin', '1', t0), trade('boundcoin', '2', t0 + 1)], 'the first batch');
  // One query: the latest time the table holds for the market (none yet).
  expect(held.lookups()).toBe(1);
  await delivered([trade('boundcoin', '3', t0 + 2), trade('boundcoin', '4', t0 + 3)], 'a later batch');
  expect(held.lookups()).toBe(1);

  // At the latest time held (t0 + 3), stored by this sink: its ids are known, no query.
  await delivered([trade('boundcoin', '4', t0 + 3), trade('boundcoin', '4b', t0 + 3)], 'a batch at the latest time');
  expect(held.lookups()).toBe(1);
  expect(sink.stats()).toMatchObject({ inserted: 5, duplicates: 1 });

  // Both ids stored at that time are known: a copy of the second is dropped, still with no query.
  await delivered([trade('boundcoin', '4b', t0 + 3), trade('boundcoin', '5', t0 + 4)], 'a copy at the latest time');
  // Two new trades at one new latest time, then their copies: both ids known.
  await delivered([trade('boundcoin', '6', t0 + 5), trade('boundcoin', '6b', t0 + 5)], 'two trades at a new latest time');
  await delivered([trade('boundcoin', '6', t0 + 5), trade('boundcoin', '6b', t0 + 5)], 'their copies');
  expect(held.lookups()).toBe(1);
  expect(sink.stats()).toMatchObject({ inserted: 8, duplicates: 4 });

  // Earlier than that: a late trade and a copy, which only the table can tell apart.
  await delivered([trade('boundcoin', '2', t0 + 1), trade('boundcoin', '2b', t0 + 1)], 'a late batch');
  expect(held.lookups()).toBe(2);
  await sink.stop();
  expect(sink.stats()).toEqual({ received: 14, inserted: 9, duplicates: 5, batches: 7, failedBatches: 0, repeatedInserts: 0 });
  expect((await storedTrades('boundcoin')).map((r) => r.id)).toEqual(['1', '2', '2b', '3', '4', '4b', '5', '6', '6b']);
});

test('a market the table already holds (a restart): its replay is looked up and dropped, the trades at the latest time held included, whoever stored them', async () => {
  const bus = createMemoryBus();
  const held = withHeldInsert(store);
  const events = [trade('restartcoin', '1', t0), trade('restartcoin', '2', t0 + 1), trade('restartcoin', '3', t0 + 1)];
  await writtenElsewhere(...events);
  const sink = await startTradeSink({ bus, store: held.store, log: silentLog, batchRows: 1_000, batchMs: 20, group: 'dd-restart' });
  const delivered = deliveryTo(bus, sink, 'dd-restart');
  await delivered([...events, trade('restartcoin', '4', t0 + 1)], 'the replay');
  // The latest time held, then the lookup of the events no later than it.
  expect(held.lookups()).toBe(2);
  expect(sink.stats()).toMatchObject({ inserted: 1, duplicates: 3 });
  // At that time the table holds trades this sink did not store: their ids are not all known, so it asks.
  await delivered([trade('restartcoin', '2', t0 + 1)], 'another copy at the latest time');
  expect(held.lookups()).toBe(3);
  await delivered([trade('restartcoin', '5', t0 + 2)], 'a later trade');
  expect(held.lookups()).toBe(3);
  await sink.stop();
  expect(sink.stats()).toEqual({ received: 6, inserted: 2, duplicates: 4, batches: 3, failedBatches: 0, repeatedInserts: 0 });
  expect((await storedTrades('restartcoin')).map((r) => r.id)).toEqual(['1', '2', '3', '4', '5']);
});

test('an insert that landed though its answer was lost: the retry sends its rows again exactly (the engine drops the copy: a view that had missed them would get them), then asks the table again for the events after it and stores each once', async () => {
  const bus = createMemoryBus();
  const held = withHeldInsert(store);
  const sink = await startTradeSink({ bus, store: held.store, log: silentLog, batchRows: 1_000, batchMs: 20, group: 'dd-lost' });
  bus.publish([trade('lostcoin', '1', t0)]);
  await until(() => sink.stats().inserted === 1, 'a first insert: the market bound');
  held.holdNextInsert();
  bus.publish([trade('lostcoin', '2', t0 + 1)]);
  await until(held.holding, 'the second insert under way');
  // Later than anything held: without asking the table again, the retry would store trade 2 twice.
  bus.publish([trade('lostcoin', '3', t0 + 2)]);
  await until(() => sink.stats().received === 3, 'a third delivered behind it');
  held.release('answerLost');
  await until(() => lagOf(bus, 'dd-lost') === 0, 'the retry committed');
  await sink.stop();
  // Trade 2 counted as held, not inserted, though its rows went again.
  expect(sink.stats()).toEqual({ received: 3, inserted: 2, duplicates: 1, batches: 3, failedBatches: 1, repeatedInserts: 1 });
  expect((await storedTrades('lostcoin')).map((r) => r.id)).toEqual(['1', '2', '3']);
  // Sent twice under one token, counted once downstream too.
  const [candles] = await store.rows<{ n: number }>("SELECT sum(trade_count) AS n FROM candles_1m WHERE asset = 'lostcoin'");
  expect(Number(candles!.n)).toBe(3);
});

test('after a rebalance the sink asks the table again: another member may have written the market meanwhile', async () => {
  const memoryBus = createMemoryBus();
  const { bus, assign } = withAssignments(memoryBus);
  const sink = await startTradeSink({ bus, store, log: silentLog, batchRows: 1, batchMs: 60_000, group: 'dd-moved' });
  assign();
  memoryBus.publish([trade('movedcoin', '1', t0)]);
  await until(() => lagOf(memoryBus, 'dd-moved') === 0, 'the first trade');
  const other = trade('movedcoin', '2', t0 + 5);
  await writtenElsewhere(other);
  assign();
  // The other member stored it but did not commit: delivered again here.
  memoryBus.publish([other]);
  await until(() => lagOf(memoryBus, 'dd-moved') === 0, 'the redelivery');
  await sink.stop();
  expect(sink.stats()).toEqual({ received: 2, inserted: 1, duplicates: 1, batches: 2, failedBatches: 0, repeatedInserts: 0 });
  expect((await storedTrades('movedcoin')).map((r) => r.id)).toEqual(['1', '2']);
});

test('a rebalance while an insert runs: what that batch learnt of the table is not kept', async () => {
  const memoryBus = createMemoryBus();
  const { bus, assign } = withAssignments(memoryBus);
  const held = withHeldInsert(store);
  const sink = await startTradeSink({ bus, store: held.store, log: silentLog, batchRows: 1, batchMs: 60_000, group: 'dd-during' });
  assign();
  held.holdNextInsert();
  memoryBus.publish([trade('duringcoin', '1', t0)]);
  await until(held.holding, 'the insert under way');
  assign();
  const other = trade('duringcoin', '2', t0 + 5);
  await writtenElsewhere(other);
  held.release('lands');
  await until(() => sink.stats().inserted === 1, 'the held insert');
  memoryBus.publish([other]);
  await until(() => sink.stats().received === 2 && sink.stats().batches === 2, 'the redelivery');
  await sink.stop();
  expect(sink.stats()).toEqual({ received: 2, inserted: 1, duplicates: 1, batches: 2, failedBatches: 0, repeatedInserts: 0 });
  expect((await storedTrades('duringcoin')).map((r) => r.id)).toEqual(['1', '2']);
});

test('a trade stored by the retry of a refused insert is looked up when a copy comes in a later batch: its market is read from the table again', async () => {
  const { bus, faults, sink } = await sinkWithFaults('dd-forget', { batchRows: 1_000, batchMs: 20 });
  faults.set('failinsert');
  bus.publish([trade('forgetcoin', '1', t0)]);
  await until(() => sink.stats().failedBatches >= 1, 'a refused insert');
  faults.set('ok');
  await until(() => sink.stats().inserted === 1 && lagOf(bus, 'dd-forget') === 0, 'the retry stored it');
  // A copy at the same time (a second collector's), later than what the table held when the retry read it.
  bus.publish([trade('forgetcoin', '1', t0)]);
  await until(() => sink.stats().received === 2 && lagOf(bus, 'dd-forget') === 0, 'the copy judged');
  await sink.stop();
  expect(sink.stats()).toMatchObject({ inserted: 1, duplicates: 1 });
  expect((await storedTrades('forgetcoin')).map((r) => r.id)).toEqual(['1']);
});

test('a stop inserts what is buffered though no flush ran before it', async () => {
  const bus = createMemoryBus();
  const sink = await startTradeSink({ bus, store, log: silentLog, batchRows: 1_000, batchMs: 60_000, group: 'dd-first-stop' });
  bus.publish([trade('firststopcoin', '1', t0), trade('firststopcoin', '2', t0 + 1)]);
  await until(() => sink.stats().received === 2, 'both delivered');
  await sink.stop();
  expect(lagOf(bus, 'dd-first-stop')).toBe(0);
  expect(sink.stats()).toEqual({ received: 2, inserted: 2, duplicates: 0, batches: 1, failedBatches: 0, repeatedInserts: 0 });
});

test('storeBuffered inserts and commits what is buffered and throws while the store refuses it; once a rebalance has dropped the refused records, it has nothing to throw for', async () => {
  const memoryBus = createMemoryBus();
  const { bus, assign } = withAssignments(memoryBus);
  const faults = withStoreFaults(store);
  const { log, lines } = recordingLog();
  // batchRows and batchMs out of reach: only storeBuffered flushes.
  const sink = await startTradeSink({ bus, store: faults.store, log, batchRows: 1_000, batchMs: 60_000, group: 'dd-buffered' });
  assign();
  memoryBus.publish([trade('bufcoin', '1', t0), trade('bufcoin', '2', t0 + 1)]);
  await until(() => sink.stats().received === 2, 'both delivered');
  await sink.storeBuffered();
  expect(lagOf(memoryBus, 'dd-buffered')).toBe(0);
  expect(sink.stats()).toMatchObject({ inserted: 2, batches: 1 });

  faults.set('failinsert');
  memoryBus.publish([trade('bufcoin', '3', t0 + 2)]);
  await until(() => sink.stats().received === 3, 'the third delivered');
  await expect(sink.storeBuffered()).rejects.toThrow(new Error('trades: the buffered events could not be stored'));
  // The partition moves: the refused record is the new owner's, and nothing is left here to store
  // (the trade sink calls its gap sink's storeBuffered before each insert: it must not fail for nothing).
  assign();
  await sink.storeBuffered();
  await sink.stop();
  faults.set('ok');
  // The one refusal logged; no word of events left behind at the stop: there are none.
  expect(lines.map((l) => l.msg)).toEqual(['batch insert failed; will retry']);
  expect(lagOf(memoryBus, 'dd-buffered')).toBe(1);
  expect(sink.stats()).toMatchObject({ received: 3, inserted: 2, failedBatches: 1 });
});

test('a rebalance while an insert runs: a batch that lands is left uncommitted, one that fails is not kept to retry; what is delivered again is judged afresh', async () => {
  const memoryBus = createMemoryBus();
  const { bus, assign } = withAssignments(memoryBus);
  const held = withHeldInsert(store);
  const sink = await startTradeSink({ bus, store: held.store, log: silentLog, batchRows: 1, batchMs: 60_000, group: 'dd-moving' });
  assign();
  held.holdNextInsert();
  memoryBus.publish([trade('movingcoin', '1', t0)]);
  await until(held.holding, 'the first insert under way');
  assign();
  held.release('lands');
  await until(() => sink.stats().inserted === 1, 'the first insert landed');
  // Not committed by this member: the bus delivers it again to whoever owns the partition now.
  expect(lagOf(memoryBus, 'dd-moving')).toBe(1);

  held.holdNextInsert();
  memoryBus.publish([trade('movingcoin', '2', t0 + 1)]);
  await until(held.holding, 'the second insert under way');
  assign();
  held.release('answerLost');
  await until(() => sink.stats().failedBatches === 1, 'the second insert failed');
  // The partition came back to this member: both are delivered again (here, published again).
  memoryBus.publish([trade('movingcoin', '1', t0), trade('movingcoin', '2', t0 + 1)]);
  await until(() => lagOf(memoryBus, 'dd-moving') === 0, 'the redelivery committed');
  await sink.stop();
  // Both found held; the failed insert was not sent again from this member's memory.
  expect(sink.stats()).toEqual({ received: 4, inserted: 1, duplicates: 2, batches: 3, failedBatches: 1, repeatedInserts: 0 });
  expect((await storedTrades('movingcoin')).map((r) => r.id)).toEqual(['1', '2']);
});

test('an insert refused again with new records behind it: only it is sent again as it was; the records after it are cut afresh', async () => {
  const { bus, faults, sink } = await sinkWithFaults('dd-again', { batchRows: 1_000, batchMs: 20 });
  faults.set('failinsert');
  bus.publish([trade('againcoin', '1', t0)]);
  await until(() => sink.stats().failedBatches >= 1, 'the first insert refused');
  bus.publish([trade('againcoin', '2', t0 + 1)]);
  await until(() => sink.stats().received === 2, 'the second delivered');
  // Two more refusals: the later one surely had both buffered (a repeat of the first insert, then a
  // slice of the second, never sent).
  const failed = sink.stats().failedBatches;
  await until(() => sink.stats().failedBatches >= failed + 2, 'a retry refused with both buffered');
  faults.set('ok');
  await until(() => lagOf(bus, 'dd-again') === 0, 'both stored and committed');
  await sink.stop();
  // Every retry sent the first insert again, the one that landed too; the second went once, as new.
  const stats = sink.stats();
  expect(stats.repeatedInserts).toBe(stats.failedBatches);
  expect(stats).toMatchObject({ received: 2, inserted: 2, duplicates: 0 });
  expect((await storedTrades('againcoin')).map((r) => r.id)).toEqual(['1', '2']);
});

test('a retry whose lookup fails keeps the repeat it was about to send: the lost insert that lands later is still matched by its token', async () => {
  const bus = createMemoryBus();
  const held = withHeldInsert(store);
  const faults = withStoreFaults(held.store);
  const sink = await startTradeSink({ bus, store: faults.store, log: silentLog, batchRows: 1_000, batchMs: 20, group: 'dd-judge' });
  held.holdNextInsert();
  bus.publish([trade('judgecoin', '1', t0)]);
  await until(held.holding, 'the first insert under way');
  bus.publish([trade('judgecoin', '2', t0 + 1)]);
  await until(() => sink.stats().received === 2, 'the second delivered');
  // The first insert's answer is lost (it lands just before the next insert), then the retries' lookups fail.
  faults.set('failquery');
  held.release('answerLostLandsLate');
  await until(() => sink.stats().failedBatches >= 2, 'a retry whose lookup failed');
  faults.set('ok');
  await until(() => lagOf(bus, 'dd-judge') === 0, 'both stored and committed');
  await sink.stop();
  expect((await storedTrades('judgecoin')).map((r) => r.id)).toEqual(['1', '2']);
  expect(sink.stats()).toMatchObject({ received: 2, inserted: 2, duplicates: 0, repeatedInserts: 1 });
});
