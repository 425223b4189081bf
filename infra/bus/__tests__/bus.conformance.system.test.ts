// One contract, two adapters: the in-process bus and Kafka (against a Kafka-protocol broker).
import { randomUUID } from 'node:crypto';
import { describe, expect, test } from 'vitest';
import type { BookEvent, LiquidationEvent, MarketEvent, TradeEvent } from '../../events.ts';
import { commitPositionsAfter, type Bus, type BusRecord, type Subscription } from '../bus.ts';
import { createKafkaBus } from '../kafkaBus.ts';
import { createMemoryBus } from '../memoryBus.ts';
import { until } from '../../../test/support/until.ts';

/**
 * Each adapter with its bound (records held per topic in memory, waiting to be sent for Kafka), and
 * whether members of a group may run in other processes.
 */
const adapters: [string, (bound?: number) => Promise<Bus>, boolean][] = [
  ['memory', async (bound) => createMemoryBus({ partitions: 3, maxRecordsPerTopic: bound }), false],
  [
    'kafka',
    async (bound) => {
      const brokers = process.env.MDS_TEST_KAFKA_BROKERS;
      if (!brokers) throw new Error('MDS_TEST_KAFKA_BROKERS must name a Kafka-protocol broker (npm test starts one)');
      // A short session timeout: the mock broker waits about that long to rebalance after a member leaves.
      return createKafkaBus({ brokers: brokers.split(','), lingerMs: 5, sessionTimeoutMs: 6_000, maxBuffered: bound });
    },
    true,
  ],
];

/** Trades of assets unique to this test: the topic is shared with other tests. */
function tradesFor(assets: string[], perAsset: number): TradeEvent[] {
  const out: TradeEvent[] = [];
  for (let i = 0; i < perAsset; i++)
    for (const asset of assets)
      out.push({
        type: 'trade', venue: 'conformance', market: `${asset}USDT`, asset, quote: 'USDT', tradeId: String(i),
        price: 10 + i, quantity: 1, side: 'buy', ts: 1_700_000_000_000 + i, receivedAt: 1_700_000_000_001 + i,
      });
  return out;
}

/** One trade, one book and one liquidation of `asset` per step. */
function mixedFor(asset: string, steps: number, from = 0): MarketEvent[] {
  const out: MarketEvent[] = [];
  for (let i = from; i < from + steps; i++) {
    const base = { venue: 'conformance', market: `${asset}USDT`, asset, quote: 'USDT', ts: 1_700_000_000_000 + i, receivedAt: 1_700_000_000_001 + i };
    out.push({ type: 'trade', ...base, tradeId: String(i), price: 10, quantity: 1, side: 'sell' } satisfies TradeEvent);
    out.push({ type: 'book', ...base, bids: [[9, 1]], asks: [[11, 1]] } satisfies BookEvent);
    out.push({ type: 'liquidation', ...base, liquidationId: String(i), price: 10, quantity: 1, positionSide: 'long' } satisfies LiquidationEvent);
  }
  return out;
}

/** A short name part unique to one test: its assets and groups. */
const unique = () => randomUUID().slice(0, 8);

// The tests of each adapter run side by side (vitest starts five at a time): a Kafka test mostly
// waits on the broker (a new group's first rebalance delay is 3 s), and each uses its own assets,
// groups and bus.
describe.concurrent.each(adapters)('%s bus', (name, open, acrossProcesses) => {
  test('says whether members of a group may run in other processes', async () => {
    const bus = await open();
    expect(bus.membersAcrossProcesses).toBe(acrossProcesses);
    await bus.close();
  });

  test('delivers every event once, in order per asset, one partition per asset', async () => {
    const bus = await open();
    const assets = [`a${unique()}`, `b${unique()}`, `c${unique()}`];
    const sent = tradesFor(assets, 50);
    const got: BusRecord<'trades'>[] = [];
    const sub = await bus.subscribe({
      group: `order-${unique()}`,
      topics: ['trades'],
      onBatch: async (records) => void got.push(...records.filter((r) => assets.includes(r.event.asset))),
    });
    bus.publish(sent);
    await bus.flush();
    await until(() => got.length >= sent.length, 'all events');
    for (const asset of assets) {
      const mine = got.filter((r) => r.event.asset === asset);
      expect(mine.map((r) => r.event)).toEqual(sent.filter((e) => e.asset === asset));
      expect(new Set(mine.map((r) => r.partition)).size).toBe(1);
      const offsets = mine.map((r) => r.offset);
      expect(offsets).toEqual([...offsets].sort((a, b) => a - b));
    }
    await sub.stop();
    await bus.close();
  });

  test('a group that starts at latest reads what is published after it joined, not what the topic held before', async () => {
    const bus = await open();
    const asset = `l${unique()}`;
    const before = tradesFor([asset], 5);
    bus.publish(before);
    await bus.flush();
    const got: TradeEvent[] = [];
    const sub = await bus.subscribe({
      group: `latest-${unique()}`,
      topics: ['trades'],
      start: 'latest',
      onBatch: async (records) => void got.push(...records.map((r) => r.event).filter((e) => e.asset === asset)),
    });
    // Kafka resolves "latest" once the member has its partitions: publish until one arrives.
    let n = 100;
    await until(() => {
      if (got.length === 0) bus.publish(tradesFor([asset], ++n).slice(-1));
      return got.length > 0;
    }, 'a trade published after joining');
    expect(got.every((e) => Number(e.tradeId) >= 100)).toBe(true);
    await sub.stop();
    await bus.close();
  });

  test('a new member of the group gets what was not committed, and not what was', async () => {
    const bus = await open();
    const asset = `r${unique()}`;
    const group = `redeliver-${unique()}`;
    bus.publish(tradesFor([asset], 20));
    await bus.flush();
    const first: BusRecord<'trades'>[] = [];
    const sub1 = await bus.subscribe({ group, topics: ['trades'], onBatch: async (r) => void first.push(...r.filter((x) => x.event.asset === asset)) });
    await until(() => first.length >= 20, 'first delivery');
    // Commit only the first 10 of ours.
    await sub1.commit([{ topic: 'trades', partition: first[9]!.partition, offset: first[9]!.offset + 1 }]);
    await sub1.stop();
    const second: BusRecord<'trades'>[] = [];
    const sub2 = await bus.subscribe({ group, topics: ['trades'], onBatch: async (r) => void second.push(...r.filter((x) => x.event.asset === asset)) });
    // One more trade of the asset: what comes before it in its partition has come by the time it does.
    bus.publish(tradesFor([asset], 21).slice(-1));
    await until(() => second.some((r) => r.event.tradeId === '20'), 'the trade after the redelivery');
    expect(second.map((r) => r.event.tradeId)).toEqual(Array.from({ length: 11 }, (_, i) => String(10 + i)));
    await sub2.stop();
    await bus.close();
  });
});

/**
 * Ten trades of one asset to a new group of the bus `open` makes: five, then five more whose first
 * delivery fails. The first delivery is committed through its first `committed` records. What the
 * group was handed, in order, up to an eleventh trade published once the redelivery came.
 */
async function handedAroundAFailure(open: () => Promise<Bus>, committed: number): Promise<{ trades: TradeEvent[]; got: string[] }> {
  const bus = await open();
  const asset = `f${unique()}`;
  const trades = tradesFor([asset], 11);
  let calls = 0;
  const got: string[] = [];
  let sub: Subscription | undefined;
  sub = await bus.subscribe({
    group: `fail-${unique()}`,
    topics: ['trades'],
    onBatch: async (records) => {
      const mine = records.filter((r) => r.event.asset === asset);
      if (mine.length === 0) return;
      calls += 1;
      if (calls === 2) throw new Error('second delivery fails');
      got.push(...mine.map((r) => r.event.tradeId));
      const last = mine[committed - 1];
      if (calls === 1 && last) await sub!.commit([{ topic: 'trades', partition: last.partition, offset: last.offset + 1 }]);
    },
  });
  bus.publish(trades.slice(0, 5));
  await bus.flush();
  await until(() => got.length >= 5, 'the first batch');
  bus.publish(trades.slice(5, 10));
  await bus.flush();
  await until(() => got.length >= 15 - committed, 'redelivery after a failure');
  // What comes before the eleventh in its partition has come by the time it does.
  bus.publish(trades.slice(10));
  await until(() => got.includes(trades[10]!.tradeId), 'the trade after the redelivery');
  await sub.stop();
  await bus.close();
  return { trades, got };
}

describe.concurrent.each(adapters)('%s bus, after a failure, across groups and at its bound', (name, open) => {
  test('a failed batch makes the bus deliver again from the committed position', async () => {
    const { trades, got } = await handedAroundAFailure(open, 0);
    // Nothing was committed, so the redelivery starts at the first trade, not at the failed batch.
    expect(got).toEqual([...trades.slice(0, 5), ...trades].map((t) => t.tradeId));
    expect(got).toHaveLength(16);
  }, 60_000);

  test('a failed batch after a commit within the delivery makes the bus deliver again from that commit', async () => {
    const { trades, got } = await handedAroundAFailure(open, 4);
    // Redelivered from the commit: the first batch's last trade, then the failed batch's.
    expect(got).toEqual([...trades.slice(0, 5), ...trades.slice(4)].map((t) => t.tradeId));
    expect(got).toHaveLength(12);
  }, 60_000);

  // Kafka checks schemas where events cross processes; in-process events are valid by construction (ingest/normalize.ts).
  test('two groups each see everything; Kafka counts invalid events and delivers none', async () => {
    const bus = await open();
    const asset = `g${unique()}`;
    const a: string[] = [];
    const b: string[] = [];
    const reader = (group: string, into: string[]) =>
      bus.subscribe({ group, topics: ['trades'], onBatch: async (r) => void into.push(...r.filter((x) => x.event.asset === asset).map((x) => x.event.tradeId)) });
    // Side by side: each Kafka member waits out the broker's first rebalance delay while it joins.
    const [subA, subB] = await Promise.all([reader(`ga-${unique()}`, a), reader(`gb-${unique()}`, b)]);
    const [good, after] = tradesFor([asset], 2);
    const invalid = name === 'kafka' ? [{ ...good!, price: -1 }, { ...good!, tradeId: '' }] : [];
    bus.publish([...invalid, good!]);
    await until(() => a.length >= 1 && b.length >= 1, 'both groups');
    // A valid trade after them: what comes before it in its partition has come by the time it does.
    bus.publish([after!]);
    await until(() => a.includes('1') && b.includes('1'), 'the trade after');
    expect(a).toEqual(['0', '1']);
    expect(b).toEqual(['0', '1']);
    expect(bus.stats().invalid).toBe(invalid.length);
    await subA.stop();
    await subB.stop();
    await bus.close();
  });

  test('groups reading different topics release each other: many times the bound goes through, nothing dropped', async () => {
    const bound = 240;
    const bus = await open(bound);
    const asset = `m${unique()}`;
    const counts = { trades: 0, books: 0, liquidations: 0 };
    // The Kafka mock creates a topic on its first produce; a consumer that subscribed before would wait for a metadata refresh.
    bus.publish(mixedFor(`warm${unique()}`, 1));
    await bus.flush();
    // One group per topic, as the aggregator wires its three sinks; each commits what it received.
    // Side by side: each Kafka member waits out the broker's first rebalance delay while it joins.
    const subs = await Promise.all(
      (['trades', 'books', 'liquidations'] as const).map(async (topic) => {
        // Kafka may deliver before subscribe resolves: the first batches wait for the handle.
        let ready: (s: Subscription) => void = () => {};
        const handle = new Promise<Subscription>((resolve) => (ready = resolve));
        const sub = await bus.subscribe({
          group: `${topic}-${unique()}`,
          topics: [topic],
          onBatch: async (records) => {
            counts[topic] += records.filter((r) => r.event.asset === asset).length;
            await (await handle).commit(commitPositionsAfter(records));
          },
        });
        ready(sub);
        return sub;
      }),
    );
    // 20 times the bound per topic, in steps of a sixth of it, each published once the bus holds room for it.
    const steps = 20 * bound;
    const step = bound / 6;
    const room = () => Object.values(bus.stats().topics).every((t) => t.heldRecords + 3 * step <= bound);
    for (let from = 0; from < steps; from += step) {
      await until(room, `room for step ${from} (${JSON.stringify(counts)})`, 60_000);
      bus.publish(mixedFor(asset, step, from));
      await bus.flush();
    }
    await until(() => counts.trades >= steps && counts.books >= steps && counts.liquidations >= steps, `everything (${JSON.stringify(counts)})`, 60_000);
    expect(counts).toEqual({ trades: steps, books: steps, liquidations: steps });
    const stats = bus.stats();
    expect(stats.dropped).toBe(0);
    for (const topic of ['trades', 'books', 'liquidations'] as const) {
      expect(stats.topics[topic].dropped).toBe(0);
      expect(stats.topics[topic].heldRecords).toBe(0);
    }
    for (const sub of subs) await sub.stop();
    await bus.close();
  }, 120_000);

  test('close sends what is still buffered', async () => {
    const publisher = await open();
    const asset = `z${unique()}`;
    const sent = tradesFor([asset], 30);
    publisher.publish(sent);
    // No flush: close must do it.
    await publisher.close();
    // Every event is out of the publisher's hands, none refused: Kafka counts an event published
    // once the broker acknowledged it, the in-process bus once it is in its log.
    expect(publisher.stats()).toMatchObject({ published: 30, dropped: 0 });
    // Held: for Kafka, nothing left unsent; in process, the 30 in the log, which no group committed.
    expect(publisher.stats().topics.trades.heldRecords).toBe(name === 'kafka' ? 0 : 30);
    if (name !== 'kafka') return;
    // Another process reading the topic after the close gets every one, in order.
    const reader = await open();
    const got: string[] = [];
    const sub = await reader.subscribe({ group: `close-${unique()}`, topics: ['trades'], onBatch: async (r) => void got.push(...r.filter((x) => x.event.asset === asset).map((x) => x.event.tradeId)) });
    await until(() => got.length >= 30, 'the events sent by close');
    expect(got).toEqual(sent.map((t) => t.tradeId));
    await sub.stop();
    await reader.close();
  });
});
