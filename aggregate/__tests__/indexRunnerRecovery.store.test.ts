import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTestStore, silentLog, trade, type TradeRow } from '../../test/support/harness.ts';
import { until } from '../../test/support/until.ts';
import { createMemoryBus } from '../../infra/bus/memoryBus.ts';
import type { StatusEvent, TradeEvent } from '../../infra/events.ts';
import { StoreTimeoutError, type Store } from '../../infra/store.ts';
import { indexParamsSchema } from '../indexPrice.ts';
import { defaultIndexSchedule, IndexRunner } from '../indexRunner.ts';
import { startStatusSink } from '../statusSink.ts';
import { startTradeSink } from '../tradeSink.ts';
import { expectTicks, indexAt, storedTicks } from './indexCheck.ts';
import { referenceTicks, type ReferenceOptions } from './indexReference.ts';

// The index runner after the faults of issue 10: a refused insert, trades stored after the runner
// passed their seconds, a venue whose collector says it is disconnected. Each time the stored
// index must equal the independent recomputation from raw trades (indexReference.ts).

let env: Awaited<ReturnType<typeof openTestStore>>;
let store: Store;
beforeAll(async () => {
  env = await openTestStore();
  store = env.store;
});
afterAll(async () => {
  await env?.dispose();
});

const schedule = defaultIndexSchedule;
// Short stale rule: a venue silent for a few seconds turns stale, so a missed trade changes the index.
const params = indexParamsSchema.parse({ volumeWindowMinutes: 3, intervalWindowMinutes: 2, staleMinMs: 5_000, staleMaxMs: 40_000, staleIntervals: 5 });

/** Venue v trades every `every[v]` seconds from 0 to `seconds`, at its own price level. */
function tradesOf(asset: string, epoch: number, seconds: number, every: Record<string, number>): TradeRow[] {
  const rows: TradeRow[] = [];
  for (const [i, [venue, n]] of Object.entries(every).entries()) {
    for (let s = 0; s < seconds; s += n) {
      const price = 100 * (1 + i * 0.004) * (1 + ((s * 7919) % 13) / 10_000);
      rows.push(trade({ venue, market: 'RECUSD', asset, quote: 'USD', trade_id: `${venue}${s}`, ts: epoch + s * 1000 + 100 + i * 50, price, quantity: 1 + (s % 5) }));
    }
  }
  return rows;
}

const asEvent = (r: TradeRow): TradeEvent => ({
  type: 'trade', venue: r.venue, market: r.market, asset: r.asset, quote: r.quote, tradeId: r.trade_id, price: r.price, quantity: r.quantity, side: r.side, ts: r.ts, receivedAt: r.received_at,
});

describe('index runner recovery', () => {
  it('loses no second when an index_ticks insert is refused once', async () => {
    const asset = 'refusedcoin';
    const epoch = Date.UTC(2026, 5, 1);
    const rows = tradesOf(asset, epoch, 120, { a: 1, b: 2, c: 3 });
    await store.insert('trades', rows);
    let refused = 0;
    const flaky: Store = {
      ...store,
      async insert(table, values, token) {
        if (table === 'index_ticks' && refused === 0) {
          refused += 1;
          throw new Error('insert refused (test)');
        }
        return store.insert(table, values, token);
      },
    };
    const runner = new IndexRunner({ store: flaky, log: silentLog, params, schedule });
    await expect(runner.step(epoch + 60_000)).rejects.toThrow('insert refused');
    // Retried as the runner's loop does, then onwards.
    await runner.catchUp(epoch + 60_000);
    await runner.catchUp(epoch + 125_000);
    expect(refused).toBe(1);

    const fromS = Math.floor(epoch / 1000) - schedule.recomputeSeconds;
    const toS = Math.floor((epoch + 125_000 - schedule.lagMs) / 1000) - 1;
    expectTicks(await storedTicks(store, asset), referenceTicks(rows, asset, fromS, toS, { params }), fromS, toS);
  });

  it('computes again the seconds of trades the sink stores after the runner passed them', async () => {
    const asset = 'backlogcoin';
    const epoch = Date.UTC(2026, 5, 2);
    // b is silent from 40 s to 90 s until its backlog lands: in between, the runner saw it go stale.
    const rows = tradesOf(asset, epoch, 200, { a: 5, b: 3, c: 7 });
    const backlog = rows.filter((r) => r.venue === 'b' && r.ts >= epoch + 40_000 && r.ts < epoch + 90_000);
    const bus = createMemoryBus();
    const runner = new IndexRunner({ store, log: silentLog, params, schedule });
    const sink = await startTradeSink({ bus, store, log: silentLog, batchRows: 1_000, batchMs: 20, group: 'recovery-trades', onInserted: (r) => runner.noteInserted(r.minTs) });
    const send = async (list: TradeRow[]) => {
      const before = sink.stats().inserted;
      bus.publish(list.map(asEvent));
      await until(() => sink.stats().inserted === before + list.length, 'the sink to insert');
    };
    try {
      await send(rows.filter((r) => r.ts < epoch + 120_000 && !backlog.includes(r)));
      // Stepping as it does live, so that it no longer remembers the rows it wrote in the gap.
      for (let t = 5_000; t <= 120_000; t += 5_000) await runner.catchUp(epoch + t);
      const passed = await storedTicks(store, asset);
      expect(indexAt(passed)(Math.floor(epoch / 1000) + 80)?.excluded).toEqual({ 'b:RECUSD': 'stale' });
      await send(backlog);
      await runner.catchUp(epoch + 121_000);
      await send(rows.filter((r) => r.ts >= epoch + 120_000));
      await runner.catchUp(epoch + 205_000);
    } finally {
      await sink.stop();
    }

    const fromS = Math.floor(epoch / 1000) - schedule.recomputeSeconds;
    const toS = Math.floor((epoch + 205_000 - schedule.lagMs) / 1000) - 1;
    expectTicks(await storedTicks(store, asset), referenceTicks(rows, asset, fromS, toS, { params }), fromS, toS);
  });

});

describe('index runner recovery, statuses and a stalled sink', () => {
  it('excludes a market from the second its collector says it is disconnected until it says connected', async () => {
    const asset = 'statuscoin';
    const epoch = Date.UTC(2026, 5, 3);
    const rows = tradesOf(asset, epoch, 200, { a: 1, b: 1, c: 2 });
    await store.insert('trades', rows);
    const statuses = [
      { key: 'c:RECUSD', ts: epoch + 500, connected: true },
      { key: 'b:RECUSD', ts: epoch + 1_000, connected: true },
      { key: 'b:RECUSD', ts: epoch + 50_300, connected: false },
      // A failed reconnect attempt repeats it.
      { key: 'b:RECUSD', ts: epoch + 70_000, connected: false },
      { key: 'b:RECUSD', ts: epoch + 120_700, connected: true },
    ];
    const bus = createMemoryBus();
    const sink = await startStatusSink({ bus, store, log: silentLog, batchRows: 1_000, batchMs: 20, group: 'recovery-statuses' });
    try {
      bus.publish(
        statuses.map((st): StatusEvent => {
          const [venue, market] = st.key.split(':') as [string, string];
          return { type: 'status', venue, market, asset, quote: 'USD', ts: st.ts, receivedAt: st.ts, connected: st.connected };
        }),
      );
      await until(() => sink.stats().inserted === statuses.length, 'the statuses to be stored');
    } finally {
      await sink.stop();
    }
    // Two runs: the second starts while b is down, from the status stored before its range.
    await new IndexRunner({ store, log: silentLog, params, schedule }).catchUp(epoch + 80_000);
    await new IndexRunner({ store, log: silentLog, params, schedule }).catchUp(epoch + 205_000);

    const e0 = Math.floor(epoch / 1000);
    const ticks = await storedTicks(store, asset);
    const at = (s: number) => indexAt(ticks)(e0 + s)!;
    expect(at(49).constituents).toEqual(['a:RECUSD', 'b:RECUSD', 'c:RECUSD']);
    expect(at(50)).toMatchObject({ status: 'ok', constituents: ['a:RECUSD', 'c:RECUSD'], excluded: { 'b:RECUSD': 'disconnected' } });
    expect(at(119).excluded).toEqual({ 'b:RECUSD': 'disconnected' });
    expect(at(120)).toMatchObject({ constituents: ['a:RECUSD', 'b:RECUSD', 'c:RECUSD'], excluded: {} });

    const options: ReferenceOptions = { params, statuses };
    const fromS = e0 - schedule.recomputeSeconds;
    const toS = Math.floor((epoch + 205_000 - schedule.lagMs) / 1000) - 1;
    expectTicks(ticks, referenceTicks(rows, asset, fromS, toS, options), fromS, toS);
  });

  it('loses no second when a trades insert lands after the sink gave up on it (a stall past its deadline)', async () => {
    const asset = 'stalledcoin';
    const epoch = Date.UTC(2026, 5, 4);
    const rows = tradesOf(asset, epoch, 60, { a: 1, b: 1 });
    // The next trades insert lands, then fails for the sink as its deadline would: an engine
    // stalled past STORE_INSERT_TIMEOUT_MS still finishes the insert. The sink tries it again.
    let stallNext = false;
    const stalling: Store = {
      ...store,
      async insert(table, values, token) {
        if (table !== 'trades' || !stallNext) return store.insert(table, values, token);
        stallNext = false;
        await store.insert(table, values, token);
        throw new StoreTimeoutError('insert', 30_000);
      },
    };
    const bus = createMemoryBus();
    const runner = new IndexRunner({ store, log: silentLog, params, schedule });
    const sink = await startTradeSink({ bus, store: stalling, log: silentLog, batchRows: 1_000, batchMs: 20, group: 'recovery-stalled', onInserted: (r) => runner.noteInserted(r.minTs) });
    const sent = (from: number, to: number) => rows.filter((r) => r.ts >= epoch + from && r.ts < epoch + to);
    const send = async (list: TradeRow[], batches: number) => {
      const before = sink.stats();
      bus.publish(list.map(asEvent));
      // Stored or found stored, in so many flushes (a failed one and its retry are two).
      await until(() => {
        const now = sink.stats();
        return now.inserted + now.duplicates === before.inserted + before.duplicates + list.length && now.batches >= before.batches + batches;
      }, 'the sink to store the trades');
    };
    try {
      await send(sent(0, 20_000), 1);
      // The runner passes 20-32 s before their trades come (a lagging bus)...
      await runner.catchUp(epoch + 35_000);
      // ...then the 20-22 s batch lands in a stall, and the rest after it.
      stallNext = true;
      await send(sent(20_000, 22_000), 2);
      expect(sink.stats().failedBatches).toBe(1);
      await send(sent(22_000, 60_000), 1);
      await runner.catchUp(epoch + 63_000);
    } finally {
      await sink.stop();
    }

    const fromS = Math.floor(epoch / 1000) - schedule.recomputeSeconds;
    const toS = Math.floor((epoch + 63_000 - schedule.lagMs) / 1000) - 1;
    // Every second traded (each of the 60) has its index row...
    const ticks = await storedTicks(store, asset);
    const rowAt = new Set(ticks.map((t) => t.second));
    const traded = [...new Set(rows.map((r) => Math.floor(r.ts / 1000)))];
    expect(traded).toHaveLength(60);
    expect(traded.filter((s) => !rowAt.has(s)), 'seconds with trades and no index row').toEqual([]);
    // ...and the index is the recomputation from all of them.
    expectTicks(ticks, referenceTicks(rows, asset, fromS, toS, { params }), fromS, toS);
  });
});
