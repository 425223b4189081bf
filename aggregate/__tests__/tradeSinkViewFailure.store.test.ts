// A view that fails while its source's part lands (as on a full disk: "while pushing to view
// mds.candles_4h_from_1h"): the trades are in `trades`, some view fed from it misses them, and the
// insert fails. The trade sink's retry must complete every view, each holding the trades once.
import { afterAll, beforeAll, expect, test } from 'vitest';
import { createMemoryBus } from '../../infra/bus/memoryBus.ts';
import type { TradeEvent } from '../../infra/events.ts';
import type { Store } from '../../infra/store.ts';
import { openTestStore, silentLog } from '../../test/support/harness.ts';
import { until } from '../../test/support/until.ts';
import { startTradeSink } from '../tradeSink.ts';

let store: Store;
let dispose: () => Promise<void>;
beforeAll(async () => ({ store, dispose } = await openTestStore()));
afterAll(async () => dispose());

const asset = 'bitcoin';
const t0 = Date.UTC(2026, 2, 3, 10, 0, 0);

/** Trades of two markets over several minutes and seconds; the one with id `boom` is the one the faulty view refuses. */
function trades(): TradeEvent[] {
  return Array.from({ length: 24 }, (_, i) => {
    const ts = t0 + i * 17_000;
    return {
      type: 'trade', venue: i % 2 ? 'binance' : 'kraken', market: i % 2 ? 'BTCUSDT' : 'XBTUSD', asset, quote: i % 2 ? 'USDT' : 'USD',
      tradeId: i === 11 ? 'boom' : `t${i}`, price: 60_000 + i * 3, quantity: 1 + (i % 4) / 4, side: 'buy', ts, receivedAt: ts + 30,
    };
  });
}

/** Every table fed from `trades` on insert that counts trades, with the count it holds of them. */
const fedTables = ['candles_1m', 'candles_5m', 'candles_15m', 'candles_1h', 'candles_4h', 'candles_1d', 'candles_1w', 'market_seconds'] as const;

async function counts(): Promise<Record<string, { trades: number; volume: number }>> {
  const out: Record<string, { trades: number; volume: number }> = {};
  const [raw] = await store.rows<{ trades: number; volume: number }>('SELECT count() AS trades, sum(quantity) AS volume FROM trades WHERE asset = {asset:String}', { asset });
  out.trades = raw!;
  for (const table of fedTables) {
    const [row] = await store.rows<{ trades: number; volume: number }>(
      'SELECT sum(trade_count) AS trades, sum(volume) AS volume FROM {table:Identifier} WHERE asset = {asset:String}',
      { table, asset },
    );
    out[table] = row!;
  }
  return out;
}

test('a trade insert that landed while a view failed: the retry completes every view, each trade counted once', async () => {
  // A view on trades that throws on the trade `boom` while view_fault holds a row: the engine's own
  // failure, raised while it pushes the block to the views, after the table's part is written.
  await store.client.command({ query: 'CREATE TABLE view_fault (on UInt8) ENGINE = MergeTree ORDER BY on' });
  await store.client.command({ query: 'CREATE TABLE view_fault_probe (trade_id String) ENGINE = MergeTree ORDER BY trade_id' });
  await store.client.command({
    query: `CREATE MATERIALIZED VIEW view_fault_from_trades TO view_fault_probe AS
            SELECT trade_id FROM trades WHERE throwIf(trade_id = 'boom' AND (SELECT count() FROM view_fault) > 0, 'injected view failure') = 0`,
  });
  await store.client.command({ query: 'INSERT INTO view_fault VALUES (1)' });

  const bus = createMemoryBus();
  const sink = await startTradeSink({ bus, store, log: silentLog, batchRows: 1_000, batchMs: 20, group: 'view-fault' });
  const sent = trades();
  bus.publish(sent);
  await until(() => sink.stats().failedBatches >= 1, 'the insert failed in a view');

  // The scenario is real: the table holds the block, some view fed from it does not.
  const failed = await counts();
  expect(failed.trades!.trades).toBe(sent.length);
  expect(fedTables.filter((t) => failed[t]!.trades < sent.length), 'tables that missed the block').not.toEqual([]);

  await store.client.command({ query: 'TRUNCATE TABLE view_fault' });
  await until(() => bus.stats().lags.find((l) => l.group === 'view-fault')?.records === 0, 'the retry committed');
  await sink.stop();
  await bus.close();

  // Recomputed from the trades sent: each once, in the table and in every view.
  const volume = sent.reduce((sum, t) => sum + t.quantity, 0);
  const after = await counts();
  for (const [table, got] of Object.entries(after)) {
    expect(got.trades, table).toBe(sent.length);
    expect(got.volume, table).toBeCloseTo(volume, 9);
  }
  expect(sink.stats()).toMatchObject({ received: sent.length, failedBatches: expect.any(Number) });
  expect(sink.stats().repeatedInserts).toBeGreaterThanOrEqual(1);
  // The faulty view itself got the block too (it has no dedup window: at least once).
  expect(Number((await store.rows<{ n: number }>("SELECT count() AS n FROM view_fault_probe WHERE trade_id = 'boom'"))[0]!.n)).toBeGreaterThanOrEqual(1);
});
