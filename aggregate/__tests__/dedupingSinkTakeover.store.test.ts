// A deduping sink taking partitions over from a member of its group that died (issue #30): on a
// bus whose members may live in other processes, it reads the ranges the dead member recorded in
// sink_intents and inserts them again, exactly, under the dead member's tokens, before anything
// else. Here the dead member is played by hand on a real chDB store: its intent written, and its
// insert landing before the takeover or after it. The in-process bus stands in for Kafka, its
// members declared to live apart: its offsets and redelivery are the contract's.
import { pino } from 'pino';
import { afterAll, afterEach, beforeAll, expect, test, vi } from 'vitest';
import type { Bus } from '../../infra/bus/bus.ts';
import { createMemoryBus } from '../../infra/bus/memoryBus.ts';
import type { TradeEvent } from '../../infra/events.ts';
import type { Store } from '../../infra/store.ts';
import { StoreFaultError } from '../../infra/storeFaults.ts';
import { openTestStore, silentLog } from '../../test/support/harness.ts';
import { until } from '../../test/support/until.ts';
import { eventKey } from '../heldEvents.ts';
import { SinkIntents } from '../sinkIntents.ts';
import { sliceToken } from '../sinkSlices.ts';
import { startTradeSink, tradeRow } from '../tradeSink.ts';

let store: Store;
let dispose: () => Promise<void>;
beforeAll(async () => ({ store, dispose } = await openTestStore()));
afterAll(async () => dispose());
afterEach(() => vi.useRealTimers());

const t0 = Date.UTC(2026, 5, 1, 12);
const trade = (asset: string, i: number): TradeEvent => ({
  type: 'trade', venue: 'alpha', market: `${asset.toUpperCase()}USDT`, asset, quote: 'USDT', tradeId: String(i), price: 100 + i, quantity: 1, side: 'buy', ts: t0 + i * 1_000, receivedAt: t0 + i * 1_000 + 5,
});

/** The in-process bus (one partition unless told, offsets from 0) whose members are said to live in other processes. */
const sharedBus = (partitions = 1): Bus => {
  const bus = createMemoryBus({ partitions });
  return Object.assign(Object.create(bus) as Bus, { membersAcrossProcesses: true });
};

/**
 * What the dead member sent: its intent for offsets first..last, and its insert under its own token.
 * `trades` are the partition's records in offset order.
 */
async function deadMember(group: string, trades: readonly TradeEvent[], first: number, last: number, partition = 0) {
  const range = { topic: 'trades' as const, partition, first, last };
  await new SinkIntents(store, group).write([range]);
  const slice = trades.slice(first, last + 1);
  const token = sliceToken('trades', [range], slice.map((t) => eventKey(t.venue, t.market, t.tradeId)));
  return { insert: () => store.insert('trades', slice.map(tradeRow), token) };
}

const counts = async (asset: string) =>
  (
    await store.rows<{ raw: number; distinct: number; candles: number }>(
      `SELECT (SELECT count() FROM trades WHERE asset = {asset:String}) AS raw,
              (SELECT uniqExact(trade_id) FROM trades WHERE asset = {asset:String}) AS distinct,
              (SELECT sum(trade_count) FROM candles_1m WHERE asset = {asset:String}) AS candles`,
      { asset },
    )
  )[0]!;

test('the dead member insert lands after the takeover: the repeat went first under its token, so it adds nothing', async () => {
  const asset = 'takeovera';
  const trades = Array.from({ length: 8 }, (_, i) => trade(asset, i));
  const dead = await deadMember('to-late', trades, 0, 4);
  const bus = sharedBus();
  const sink = await startTradeSink({ bus, store, log: silentLog, batchRows: 1_000, batchMs: 10, group: 'to-late' });
  // Offsets 0..2 only: the repeat of 0..4 waits for the rest, and nothing is stored meanwhile.
  bus.publish(trades.slice(0, 3));
  await until(() => sink.stats().received === 3, 'the first three delivered');
  await new Promise((r) => setTimeout(r, 100)); // several flush ticks (10 ms) pass with the repeat incomplete
  expect(sink.stats()).toMatchObject({ inserted: 0, batches: 0 });
  bus.publish(trades.slice(3));
  await until(() => sink.stats().inserted === 8, 'every trade stored');
  await dead.insert();
  await sink.stop();
  expect(await counts(asset)).toEqual({ raw: 8, distinct: 8, candles: 8 });
  expect(sink.stats()).toMatchObject({ received: 8, inserted: 8, duplicates: 0, repeatedInserts: 1 });
});

test('the dead member insert had landed: the repeat finds every event held and stores none of them again', async () => {
  const asset = 'takeoverb';
  const trades = Array.from({ length: 6 }, (_, i) => trade(asset, i));
  const dead = await deadMember('to-landed', trades, 0, 3);
  await dead.insert();
  const bus = sharedBus();
  const sink = await startTradeSink({ bus, store, log: silentLog, batchRows: 1_000, batchMs: 10, group: 'to-landed' });
  bus.publish(trades);
  await until(() => sink.stats().received === 6 && sink.stats().inserted + sink.stats().duplicates === 6, 'every trade judged');
  await sink.stop();
  expect(sink.stats()).toMatchObject({ inserted: 2, duplicates: 4, repeatedInserts: 0 });
  expect(await counts(asset)).toEqual({ raw: 6, distinct: 6, candles: 6 });
});

test('ranges committed before the takeover are not repeated; a range recorded twice is repeated once', async () => {
  const group = 'to-committed';
  const intents = new SinkIntents(store, group);
  await intents.write([{ topic: 'trades', partition: 0, first: 0, last: 4 }]);
  await intents.write([{ topic: 'trades', partition: 0, first: 5, last: 9 }]);
  await intents.write([{ topic: 'trades', partition: 0, first: 5, last: 9 }]);
  await intents.write([{ topic: 'trades', partition: 1, first: 5, last: 9 }]);
  await new SinkIntents(store, 'another-group').write([{ topic: 'trades', partition: 0, first: 10, last: 12 }]);
  expect(await intents.uncommitted('trades', 0, 5)).toEqual([{ topic: 'trades', partition: 0, first: 5, last: 9 }]);
  expect(await intents.uncommitted('trades', 0, 0)).toEqual([
    { topic: 'trades', partition: 0, first: 0, last: 4 },
    { topic: 'trades', partition: 0, first: 5, last: 9 },
  ]);
  expect(await intents.uncommitted('trades', 0, 10)).toEqual([]);
  expect(await intents.uncommitted('liquidations', 0, 0)).toEqual([]);
});

test('a member of a shared group records the ranges of every insert it makes, and none for a batch of duplicates alone', async () => {
  const asset = 'takeovere';
  const group = 'to-records';
  const trades = Array.from({ length: 5 }, (_, i) => trade(asset, i));
  const bus = sharedBus();
  const sink = await startTradeSink({ bus, store, log: silentLog, batchRows: 1_000, batchMs: 10, group });
  bus.publish(trades.slice(0, 3));
  await until(() => sink.stats().inserted === 3, 'the first three stored');
  bus.publish(trades.slice(3));
  await until(() => sink.stats().inserted === 5, 'all five stored');
  // Offset 5: a copy of offset 0, judged a duplicate: nothing is inserted for it, so nothing is recorded.
  bus.publish([trades[0]!]);
  await until(() => sink.stats().duplicates === 1, 'the copy judged');
  await sink.stop();
  const ranges = await store.rows<{ first: number; last: number }>(
    'SELECT toUInt32(first_offset) AS first, toUInt32(last_offset) AS last FROM sink_intents WHERE consumer_group = {group:String} ORDER BY first',
    { group },
  );
  const recorded = ranges.flatMap((r) => Array.from({ length: r.last - r.first + 1 }, (_, i) => r.first + i));
  expect(recorded).toEqual([0, 1, 2, 3, 4]);
});

test('on the in-process bus (members in one process) the sink writes no intents', async () => {
  const asset = 'takeoverc';
  const bus = createMemoryBus();
  const sink = await startTradeSink({ bus, store, log: silentLog, batchRows: 1_000, batchMs: 10, group: 'to-local' });
  bus.publish([trade(asset, 0), trade(asset, 1)]);
  await until(() => sink.stats().inserted === 2, 'both stored');
  await sink.stop();
  expect(await store.rows("SELECT count() AS n FROM sink_intents WHERE consumer_group = 'to-local'")).toEqual([{ n: 0 }]);
});

test('a copy of a stored trade whose time a venue rounded down (a REST history to the second) is found and not stored again', async () => {
  const asset = 'takeoverd';
  const live = { ...trade(asset, 1), ts: t0 + 734 };
  const bus = createMemoryBus();
  const sink = await startTradeSink({ bus, store, log: silentLog, batchRows: 1, batchMs: 10, group: 'to-coarse' });
  bus.publish([live]);
  await until(() => sink.stats().inserted === 1, 'the live copy stored');
  // A later trade makes the market's bound later than both copies: the coarse copy is looked up.
  bus.publish([trade(asset, 2)]);
  await until(() => sink.stats().inserted === 2, 'a later trade stored');
  bus.publish([{ ...live, ts: t0, receivedAt: t0 + 5_000 }]);
  await until(() => sink.stats().received === 3 && sink.stats().inserted + sink.stats().duplicates === 3, 'the coarse copy judged');
  await sink.stop();
  expect(sink.stats()).toMatchObject({ inserted: 2, duplicates: 1 });
  expect(await counts(asset)).toMatchObject({ raw: 2, distinct: 2 });
});

interface LogLine {
  level: number;
  msg: string;
}

function recordingLog(level: 'info' | 'warn') {
  const lines: LogLine[] = [];
  const log = pino({ level }, { write: (s: string) => void lines.push(JSON.parse(s) as LogLine) });
  return { log, lines };
}

const lagOf = (bus: Bus, group: string) => bus.stats().lags.find((l) => l.group === group && l.topic === 'trades')?.records;

/** The ranges recorded for a group, each once, by partition and offset. */
const intentRanges = (group: string) =>
  store.rows<{ partition: number; first: number; last: number }>(
    `SELECT DISTINCT toUInt32(partition) AS partition, toUInt32(first_offset) AS first, toUInt32(last_offset) AS last
     FROM sink_intents WHERE consumer_group = {group:String} ORDER BY partition, first, last`,
    { group },
  );

/**
 * The real store, counting the reads of sink_intents; it can run something (a dead member's insert
 * landing) right after the next read of a market's latest time, before the sink's lookup.
 */
function watchedStore(base: Store) {
  let intentReads = 0;
  let afterBoundRead: (() => Promise<void>) | undefined;
  const wrapped: Store = {
    ...base,
    async rows<T>(query: string, params?: Record<string, unknown>) {
      const rows = await base.rows<T>(query, params);
      if (query.includes('FROM sink_intents')) intentReads += 1;
      if (afterBoundRead && query.includes('max(ts)')) {
        const run = afterBoundRead;
        afterBoundRead = undefined;
        await run();
      }
      return rows;
    },
  };
  return { store: wrapped, intentReads: () => intentReads, afterBoundRead: (run: () => Promise<void>) => void (afterBoundRead = run) };
}

/**
 * The real store with its inserts into `trades` in the test's hands: the next one held until
 * released (then it lands, or is refused), or the one after `skip` others refused at once.
 */
function gatedInserts(base: Store) {
  let next: { skip: number; hold: boolean } | undefined;
  let release: ((refuse: boolean) => void) | undefined;
  const wrapped: Store = {
    ...base,
    async insert(table, rows, token) {
      if (table === 'trades' && next && next.skip-- === 0) {
        const { hold } = next;
        next = undefined;
        const refuse = hold ? await new Promise<boolean>((resolve) => (release = resolve)) : true;
        release = undefined;
        if (refuse) throw new StoreFaultError('insert refused');
      }
      await base.insert(table, rows, token);
    },
  };
  return {
    store: wrapped,
    holdNext: () => void (next = { skip: 0, hold: true }),
    refuseAfter: (skip: number) => void (next = { skip, hold: false }),
    holding: () => release !== undefined,
    release: (refuse: boolean) => release?.(refuse),
  };
}

/** A bus whose members' assignments come when the test calls `assign` (as in dedupingSink.store.test.ts), members said to live apart. */
function withAssignments(base: Bus) {
  const onAssignments: (() => void)[] = [];
  const subscribe: Bus['subscribe'] = (opts) => {
    const { onAssignment, ...rest } = opts;
    if (onAssignment) onAssignments.push(onAssignment);
    return base.subscribe(rest);
  };
  return { bus: Object.assign(Object.create(base) as Bus, { subscribe }), assign: () => onAssignments.forEach((f) => f()) };
}

test('intents that overlap an earlier one are left out and said; a takeover is logged with the number of ranges it repeats, one with none is not', async () => {
  const asset = 'takeoverf';
  const group = 'to-overlap';
  const intents = new SinkIntents(store, group);
  // 4-6 shares offset 4 with 0-4; 5-9 starts just past 0-4, the last range kept.
  for (const [first, last] of [[0, 4], [4, 6], [5, 9]] as const) await intents.write([{ topic: 'trades', partition: 0, first, last }]);
  const { log, lines } = recordingLog('info');
  const bus = sharedBus();
  const sink = await startTradeSink({ bus, store, log, batchRows: 1_000, batchMs: 10, group });
  bus.publish(Array.from({ length: 10 }, (_, i) => trade(asset, i)));
  await until(() => sink.stats().inserted === 10, 'every trade stored');
  await sink.stop();
  const range = (first: number, last: number) => ({ topic: 'trades', partition: 0, first, last });
  expect(lines).toEqual([
    expect.objectContaining({ level: 40, msg: 'overlapping sink intents: the later is not repeated', range: range(4, 6), prior: range(0, 4) }),
    expect.objectContaining({ level: 30, msg: 'partition taken over: repeating the inserts its last owner may have made', topic: 'trades', partition: 0, ranges: 2 }),
  ]);
  expect(sink.stats()).toMatchObject({ inserted: 10, duplicates: 0, repeatedInserts: 2 });
  expect(await counts(asset)).toEqual({ raw: 10, distinct: 10, candles: 10 });

  // A group with no intents takes its partition over silently.
  const quiet = recordingLog('info');
  const other = await startTradeSink({ bus, store, log: quiet.log, batchRows: 1_000, batchMs: 10, group: 'to-overlap-none' });
  bus.publish([trade('takeoverg', 0), trade('takeoverg', 1)]);
  await until(() => other.stats().inserted === 2, 'the other group stored its two');
  await other.stop();
  expect(quiet.lines).toEqual([]);
});

test('a partition\'s intents are read once per assignment, and again after a rebalance: an owner in between may have left ranges', async () => {
  const asset = 'takeoverh';
  const group = 'to-again';
  const trades = Array.from({ length: 10 }, (_, i) => trade(asset, i));
  const watched = watchedStore(store);
  const { bus, assign } = withAssignments(sharedBus());
  const sink = await startTradeSink({ bus, store: watched.store, log: silentLog, batchRows: 1_000, batchMs: 10, group });
  assign();
  bus.publish(trades.slice(0, 3));
  await until(() => sink.stats().inserted === 3, 'the first three stored');
  bus.publish(trades.slice(3, 5));
  await until(() => sink.stats().inserted === 5, 'the next two stored');
  expect(watched.intentReads()).toBe(1);
  // The partition went to another member and came back: that member recorded 5..7, and its
  // insert lands only after this sink has stored them.
  assign();
  const between = await deadMember(group, trades, 5, 7);
  bus.publish(trades.slice(5));
  await until(() => sink.stats().inserted === 10, 'the rest stored');
  await between.insert();
  await sink.stop();
  expect(watched.intentReads()).toBe(2);
  expect(sink.stats()).toMatchObject({ inserted: 10, repeatedInserts: 1 });
  expect(await counts(asset)).toEqual({ raw: 10, distinct: 10, candles: 10 });
});

test('a repeat is looked up even past what the table held of its market: the dead member\'s insert may land between the two reads', async () => {
  const asset = 'takeoveri';
  const group = 'to-between';
  const trades = Array.from({ length: 6 }, (_, i) => trade(asset, i));
  const dead = await deadMember(group, trades, 0, 3);
  const watched = watchedStore(store);
  watched.afterBoundRead(dead.insert);
  const bus = sharedBus();
  const sink = await startTradeSink({ bus, store: watched.store, log: silentLog, batchRows: 1_000, batchMs: 10, group });
  bus.publish(trades);
  await until(() => sink.stats().received === 6 && sink.stats().inserted + sink.stats().duplicates === 6, 'every trade judged');
  await sink.stop();
  // The repeat found its four held (landed under the dead member's token): nothing sent for them.
  expect(sink.stats()).toMatchObject({ inserted: 2, duplicates: 4, repeatedInserts: 0 });
  expect(await counts(asset)).toEqual({ raw: 6, distinct: 6, candles: 6 });
});

test('a partition held back for a repeat waits, neither committed nor counted, while another partition\'s slice goes on; a stop leaves it to the next owner, without an error', async () => {
  const group = 'to-split';
  // With two partitions 'splita' lands in partition 0 and 'splitb' in partition 1 (FNV-1a of the asset).
  const held = Array.from({ length: 4 }, (_, i) => trade('splita', i));
  const free = Array.from({ length: 3 }, (_, i) => trade('splitb', i));
  await deadMember(group, held, 0, 3);
  const { log, lines } = recordingLog('warn');
  const bus = sharedBus(2);
  const sink = await startTradeSink({ bus, store, log, batchRows: 1_000, batchMs: 10, group });
  bus.publish([...held.slice(0, 2), ...free]);
  await until(() => sink.stats().inserted === 3, 'partition 1 stored');
  expect(lagOf(bus, group)).toBe(2);
  expect(sink.stats()).toMatchObject({ received: 5, inserted: 3, duplicates: 0, repeatedInserts: 0 });
  await sink.stop();
  expect(lines).toEqual([]);
  expect(lagOf(bus, group)).toBe(2);
  expect(await intentRanges(group)).toEqual([{ partition: 0, first: 0, last: 3 }, { partition: 1, first: 0, last: 2 }]);
  expect(await counts('splita')).toMatchObject({ raw: 0 });
});

test('a shared flush whose first insert fails sends again, exactly, every slice whose intent it wrote, before what came after', async () => {
  const group = 'to-first-fails';
  // 'faila' lands in partition 0, 'failb' in partition 1: partition 0's slice is inserted first.
  const gate = gatedInserts(store);
  const bus = sharedBus(2);
  const sink = await startTradeSink({ bus, store: gate.store, log: silentLog, batchRows: 1_000, batchMs: 10, group });
  gate.holdNext();
  bus.publish([trade('faila', 0), trade('faila', 1), trade('failb', 0), trade('failb', 1)]);
  await until(gate.holding, "partition 0's insert under way");
  // One more for partition 1 while it waits: its slice is still sent as cut, this one after it.
  bus.publish([trade('failb', 2)]);
  await until(() => sink.stats().received === 5, 'the fifth delivered');
  gate.release(true);
  await until(() => sink.stats().inserted === 5, 'everything stored');
  await sink.stop();
  expect(sink.stats()).toMatchObject({ received: 5, inserted: 5, duplicates: 0, failedBatches: 1, repeatedInserts: 2 });
  expect(await intentRanges(group)).toEqual([
    { partition: 0, first: 0, last: 1 },
    { partition: 1, first: 0, last: 1 },
    { partition: 1, first: 2, last: 2 },
  ]);
});

test('a shared flush whose second insert fails sends that one again, not the first, which landed', async () => {
  const group = 'to-second-fails';
  // 'pairy' lands in partition 0, 'pairx' in partition 1.
  const gate = gatedInserts(store);
  const bus = sharedBus(2);
  const sink = await startTradeSink({ bus, store: gate.store, log: silentLog, batchRows: 1_000, batchMs: 10, group });
  gate.refuseAfter(1);
  bus.publish([trade('pairy', 0), trade('pairy', 1), trade('pairx', 0), trade('pairx', 1)]);
  await until(() => sink.stats().inserted === 4 && lagOf(bus, group) === 0, 'everything stored and committed');
  await sink.stop();
  // The retry finds partition 0's two held (duplicates) and repeats partition 1's insert alone.
  expect(sink.stats()).toMatchObject({ received: 4, inserted: 4, duplicates: 2, failedBatches: 1, repeatedInserts: 1 });
});

test('storeFirst runs only for a flush with records to insert: not on ticks while only records waiting for a repeat are buffered, nor at a stop with nothing buffered', async () => {
  vi.useFakeTimers({ toFake: ['Date', 'setInterval', 'clearInterval'] });
  const asset = 'takeoverj';
  const group = 'to-first';
  const trades = Array.from({ length: 8 }, (_, i) => trade(asset, i));
  await deadMember(group, trades, 0, 4);
  const watched = watchedStore(store);
  let storeFirstCalls = 0;
  const bus = sharedBus();
  const sink = await startTradeSink({ bus, store: watched.store, log: silentLog, batchRows: 1_000, batchMs: 40, group, storeFirst: async () => void (storeFirstCalls += 1) });
  bus.publish(trades.slice(0, 3));
  await until(() => sink.stats().received === 3, 'the first three delivered');
  // The tick at batchMs flushes and finds the repeat incomplete (the read of the intents is its only wait).
  vi.advanceTimersByTime(40);
  await until(() => watched.intentReads() === 1, 'the flush that holds the three back');
  // Ten more ticks, past batchMs, with only those three buffered.
  vi.advanceTimersByTime(100);
  bus.publish(trades.slice(3));
  await until(() => sink.stats().received === 8, 'the rest delivered');
  vi.advanceTimersByTime(40);
  await until(() => sink.stats().inserted === 8, 'every trade stored');
  await sink.stop();
  expect(storeFirstCalls).toBe(2);
});

test('records waiting for a repeat do not count toward batchRows: delivery goes on at once, and the repeat goes when its records come', async () => {
  const asset = 'takeoverk';
  const group = 'to-rows';
  const trades = Array.from({ length: 6 }, (_, i) => trade(asset, i));
  await deadMember(group, trades, 0, 4);
  const bus = sharedBus();
  // A store call before each flush, as the trade sink stores its gaps first.
  const storeFirst = async () => void (await store.rows('SELECT 1'));
  const sink = await startTradeSink({ bus, store, log: silentLog, batchRows: 3, batchMs: 60_000, group, storeFirst });
  bus.publish(trades.slice(0, 3));
  await until(() => sink.stats().received === 3, 'the first three delivered');
  const sentAt = performance.now();
  bus.publish(trades.slice(3));
  await until(() => sink.stats().received === 6, 'the rest delivered', 5_000);
  // The sink pauses delivery (1 s) only while the store refuses, not for records held back.
  expect(performance.now() - sentAt).toBeLessThan(900);
  await until(() => sink.stats().inserted === 6, 'every trade stored');
  await sink.stop();
  expect(sink.stats()).toMatchObject({ inserted: 6, duplicates: 0, failedBatches: 0, repeatedInserts: 1 });
});
