// A deduping sink taking partitions over from a member of its group that died (issue #30): on a
// bus whose members may live in other processes, it reads the ranges the dead member recorded in
// sink_intents and inserts them again, exactly, under the dead member's tokens, before anything
// else. Here the dead member is played by hand on a real chDB store: its intent written, and its
// insert landing before the takeover or after it. The in-process bus stands in for Kafka, its
// members declared to live apart: its offsets and redelivery are the contract's.
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { Bus } from '../../infra/bus/bus.ts';
import { createMemoryBus } from '../../infra/bus/memoryBus.ts';
import type { TradeEvent } from '../../infra/events.ts';
import type { Store } from '../../infra/store.ts';
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

const t0 = Date.UTC(2026, 5, 1, 12);
const trade = (asset: string, i: number): TradeEvent => ({
  type: 'trade', venue: 'alpha', market: `${asset.toUpperCase()}USDT`, asset, quote: 'USDT', tradeId: String(i), price: 100 + i, quantity: 1, side: 'buy', ts: t0 + i * 1_000, receivedAt: t0 + i * 1_000 + 5,
});

/** The in-process bus (one partition, offsets from 0) whose members are said to live in other processes. */
const sharedBus = (): Bus => {
  const bus = createMemoryBus();
  return Object.assign(Object.create(bus) as Bus, { membersAcrossProcesses: true });
};

/** What the dead member sent: its intent for offsets first..last, and its insert under its own token. */
async function deadMember(group: string, trades: readonly TradeEvent[], first: number, last: number) {
  const range = { topic: 'trades' as const, partition: 0, first, last };
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
