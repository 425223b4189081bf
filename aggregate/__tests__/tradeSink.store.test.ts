import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { Bus } from '../../infra/bus/bus.ts';
import { createMemoryBus } from '../../infra/bus/memoryBus.ts';
import { createLogger } from '../../infra/log.ts';
import { migrate } from '../../infra/migrate.ts';
import { openStore, type Store } from '../../infra/store.ts';
import type { TradeEvent } from '../../infra/events.ts';
import { computeIndex } from '../../test/support/harness.ts';
import { until } from '../../test/support/until.ts';
import { defaultIndexParams } from '../indexPrice.ts';
import { defaultIndexSchedule } from '../indexRunner.ts';
import { startTradeSink } from '../tradeSink.ts';
import { expectTicks, storedTicks } from './indexCheck.ts';
import { referenceTicks } from './indexReference.ts';

const dir = mkdtempSync(join(tmpdir(), 'mds-sink-'));
let store: Store;
beforeAll(async () => {
  store = await openStore({ MDS_DATA_DIR: dir, CLICKHOUSE_DATABASE: 'mds', CLICKHOUSE_URL: undefined });
  await migrate(store);
});
afterAll(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

function trades(asset: string, n: number, t0: number): TradeEvent[] {
  return Array.from({ length: n }, (_, i) => ({
    type: 'trade',
    venue: i % 2 ? 'binance' : 'other',
    market: `${asset.toUpperCase()}USDT`,
    asset,
    quote: 'USDT',
    tradeId: String(1000 + Math.floor(i / 2)),
    // Within 0.2 % across venues, as real venues quote: both stay in the index price.
    price: 50 + ((i * 7919) % 101) / 1000,
    quantity: 0.1 + ((i * 104729) % 37) / 10,
    side: i % 3 ? 'buy' : 'sell',
    ts: t0 + i * 337,
    receivedAt: t0 + i * 337 + 5,
  }));
}

test('replayed and duplicated trades are stored once; candles and index prices match a recomputation', async () => {
  const bus = createMemoryBus();
  const sink = await startTradeSink({ bus, store, log: createLogger('silent'), batchRows: 100, batchMs: 50, group: 'g1' });
  const t0 = Date.UTC(2026, 0, 5, 23, 58, 0);
  const sent = trades('sinkcoin', 700, t0);
  const count = async () => (await store.rows<{ n: number }>("SELECT count() AS n FROM trades WHERE asset = 'sinkcoin'"))[0]!.n;
  bus.publish(sent.slice(0, 400));
  await until(async () => (await count()) === 400, 'the first 400 trades stored');
  // The same trades again (a collector overlap or a replay) across later batches, then a third copy of a slice.
  bus.publish(sent.slice(100, 500));
  bus.publish(sent.slice(500));
  bus.publish(sent.slice(0, 50));
  await until(() => sink.stats().received === 1050, 'the sink to receive all 1050 trades');
  await sink.stop();
  await bus.close();
  expect(await count()).toBe(700);
  expect(sink.stats()).toMatchObject({ received: 1050, inserted: 700, duplicates: 350 });
  expect(sink.stats().batches).toBeGreaterThan(1);

  // Independent recomputation from the raw events: 1m and 1h candles over all markets.
  for (const [table, ms] of [['candles_1m', 60_000], ['candles_1h', 3_600_000], ['candles_1w', 0]] as const) {
    const bucketOf = (ts: number) => {
      if (ms) return Math.floor(ts / ms) * ms;
      const day = Math.floor(ts / 86_400_000);
      return (day - ((day + 3) % 7)) * 86_400_000; // Monday (1970-01-01 was a Thursday)
    };
    const expected = new Map<number, { open: TradeEvent; close: TradeEvent; high: number; low: number; volume: number; n: number }>();
    const order = (a: TradeEvent, b: TradeEvent) => a.ts - b.ts || (a.tradeId < b.tradeId ? -1 : a.tradeId > b.tradeId ? 1 : 0);
    for (const t of sent) {
      const b = bucketOf(t.ts);
      const c = expected.get(b);
      if (!c) expected.set(b, { open: t, close: t, high: t.price, low: t.price, volume: t.quantity, n: 1 });
      else {
        if (order(t, c.open) < 0) c.open = t;
        if (order(t, c.close) > 0) c.close = t;
        c.high = Math.max(c.high, t.price);
        c.low = Math.min(c.low, t.price);
        c.volume += t.quantity;
        c.n += 1;
      }
    }
    const rows = await store.rows<{ t: number; open: number; high: number; low: number; close: number; volume: number; n: number }>(
      `SELECT toUnixTimestamp(bucket) * 1000 AS t, argMinMerge(open) AS open, max(high) AS high, min(low) AS low,
              argMaxMerge(close) AS close, sum(volume) AS volume, sum(trade_count) AS n
       FROM {table:Identifier} WHERE asset = 'sinkcoin' GROUP BY bucket ORDER BY bucket`,
      { table },
    );
    expect(rows.map((r) => r.t)).toEqual([...expected.keys()].sort((a, b) => a - b));
    for (const r of rows) {
      const e = expected.get(r.t)!;
      expect(r).toMatchObject({ open: e.open.price, close: e.close.price, high: e.high, low: e.low, n: e.n });
      expect(r.volume).toBeCloseTo(e.volume, 9);
    }
  }

  // Index price of every second (aggregate/METHODOLOGY.md, "Index price"), from what the sink stored.
  const indexNow = t0 + 300_000;
  await computeIndex(store, indexNow);
  const raw = sent.map((t) => ({ ...t, trade_id: t.tradeId }));
  const fromS = Math.floor(t0 / 1000) - 10;
  const toS = Math.floor((indexNow - defaultIndexSchedule.lagMs) / 1000) - 1;
  const expected = referenceTicks(raw, 'sinkcoin', fromS, toS, { params: defaultIndexParams });
  expect(expected.length).toBeGreaterThan(200);
  expectTicks(await storedTicks(store, 'sinkcoin'), expected, fromS, toS);
});

test('a batch the consumer fails is delivered again and stored once', async () => {
  const bus = createMemoryBus();
  // The sink's consumer fails its first delivery once the sink has stored it, and the sink's commit of it is
  // lost (as in a crash between the insert and the commit): the bus delivers the same records again.
  const deliveries: number[][] = [];
  let failed = false;
  let lostCommits = 0;
  const failingOnce: Bus = {
    ...bus,
    async subscribe(opts) {
      const sub = await bus.subscribe({
        ...opts,
        onBatch: async (records) => {
          deliveries.push(records.map((r) => r.offset));
          await opts.onBatch(records);
          if (failed) return;
          await until(() => lostCommits > 0, 'the sink to store its first delivery and commit it');
          failed = true;
          throw new Error('the first delivery fails after it was stored');
        },
      });
      return {
        async commit(positions) {
          if (!failed) lostCommits += 1;
          else await sub.commit(positions);
        },
        stop: () => sub.stop(),
      };
    },
  };
  const sink = await startTradeSink({ bus: failingOnce, store, log: createLogger('silent'), batchRows: 50, batchMs: 20, group: 'g2' });
  const sent = trades('flakycoin', 120, Date.UTC(2026, 0, 6));
  bus.publish(sent);
  const lag = () => bus.stats().lags.find((l) => l.group === 'g2')?.records;
  await until(() => failed && lag() === 0, 'the records delivered again and committed', { context: () => JSON.stringify({ deliveries, stats: sink.stats() }) });
  await sink.stop();
  await bus.close();

  // Every record of the failed delivery came again; every record came.
  const [first, ...later] = deliveries;
  expect(first!.length).toBeGreaterThan(0);
  expect(later.flat().filter((o) => first!.includes(o)).sort((a, b) => a - b)).toEqual(first);
  expect(new Set(deliveries.flat())).toEqual(new Set(Array.from({ length: 120 }, (_, i) => i)));
  // Stored once: 120 rows, one per venue and trade id; the copies delivered again were found held.
  const rows = await store.rows<{ venue: string; trade_id: string }>("SELECT venue, trade_id FROM trades WHERE asset = 'flakycoin'");
  expect(rows).toHaveLength(120);
  expect(new Set(rows.map((r) => `${r.venue}/${r.trade_id}`)).size).toBe(120);
  const received = deliveries.flat().length;
  expect(sink.stats()).toMatchObject({ received, inserted: 120, duplicates: received - 120 });
  // Each record came once, and those of the failed delivery once more.
  expect(received).toBe(120 + first!.length);
});
