// Retention on the real engine: the TTLs applied to a migrated store, read back from ClickHouse's
// own system.tables, rows past them gone after a merge (and not the rows they fed), idempotent, and
// removed when the operator no longer names the table.
import { afterAll, beforeAll, expect, test } from 'vitest';
import { openTestStore, trade } from '../../test/support/harness.ts';
import { applyRetention } from '../retention.ts';
import type { Store } from '../store.ts';

let store: Store;
let dispose: () => Promise<void>;
beforeAll(async () => ({ store, dispose } = await openTestStore()));
afterAll(async () => dispose());

const day = 86_400_000;

/** The table TTL clause of each table, as the engine reports it (undefined: none). */
async function ttls(): Promise<Record<string, string | undefined>> {
  const rows = await store.rows<{ name: string; engine_full: string }>('SELECT name, engine_full FROM system.tables WHERE database = currentDatabase()');
  return Object.fromEntries(rows.map((r) => [r.name, r.engine_full.includes(' TTL ') ? r.engine_full.slice(r.engine_full.indexOf(' TTL ') + 5).replace(/ SETTINGS .*$/, '') : undefined]));
}

const count = async (query: string) => Number((await store.rows<{ n: number }>(query))[0]!.n);

test('the migrated store: only the bookkeeping tables (sink_intents, index_recompute_requests) have a TTL, and the defaults change nothing', async () => {
  const before = await ttls();
  expect(Object.entries(before).filter(([, ttl]) => ttl !== undefined)).toEqual([
    ['index_recompute_requests', 'toDateTime(requested_at) + toIntervalDay(30)'],
    ['sink_intents', 'toDateTime(written_at) + toIntervalDay(1)'],
  ]);
  expect(await applyRetention(store, {})).toEqual([]);
  expect(await ttls()).toEqual(before);
});

test('a retention is set as a TTL, drops older rows at the merge but not what they fed, and is removed once no longer named', async () => {
  const now = Date.now();
  const old = now - 40 * day;
  const recent = now - day;
  await store.insert('trades', [
    trade({ venue: 'binance', market: 'BTCUSDT', asset: 'bitcoin', quote: 'USDT', trade_id: 'old', ts: old, price: 100, quantity: 1 }),
    trade({ venue: 'binance', market: 'BTCUSDT', asset: 'bitcoin', quote: 'USDT', trade_id: 'recent', ts: recent, price: 101, quantity: 2 }),
  ]);

  const set = await applyRetention(store, { trades: 30, candles_1h: 400 });
  expect(set).toEqual([
    { table: 'trades', from: undefined, to: 'toDateTime(ts) + toIntervalDay(30)' },
    { table: 'candles_1h', from: undefined, to: 'bucket + toIntervalDay(400)' },
  ]);
  const after = await ttls();
  expect(after.trades).toBe('toDateTime(ts) + toIntervalDay(30)');
  expect(after.candles_1h).toBe('bucket + toIntervalDay(400)');
  expect(after.sink_intents).toBe('toDateTime(written_at) + toIntervalDay(1)');
  expect(after.candles_1m).toBeUndefined();
  // Applied again: nothing to change.
  expect(await applyRetention(store, { trades: 30, candles_1h: 400 })).toEqual([]);

  await store.client.command({ query: 'OPTIMIZE TABLE trades FINAL' });
  expect((await store.rows<{ id: string }>('SELECT trade_id AS id FROM trades ORDER BY id')).map((r) => r.id)).toEqual(['recent']);
  // The candles the old trade fed are kept: their table keeps everything.
  expect(await count(`SELECT sum(trade_count) AS n FROM candles_1m WHERE bucket = toStartOfMinute(fromUnixTimestamp64Milli(${old}, 'UTC'))`)).toBe(1);

  // Changed, then no longer named: back to keeping everything, sink_intents keeps its default.
  expect(await applyRetention(store, { trades: 60 })).toEqual([
    { table: 'trades', from: 'toDateTime(ts) + toIntervalDay(30)', to: 'toDateTime(ts) + toIntervalDay(60)' },
    { table: 'candles_1h', from: 'bucket + toIntervalDay(400)', to: undefined },
  ]);
  expect(await applyRetention(store, {})).toEqual([{ table: 'trades', from: 'toDateTime(ts) + toIntervalDay(60)', to: undefined }]);
  const removed = await ttls();
  expect(removed.trades).toBeUndefined();
  expect(removed.candles_1h).toBeUndefined();
  expect(removed.sink_intents).toBe('toDateTime(written_at) + toIntervalDay(1)');
  expect(await applyRetention(store, {})).toEqual([]);

  // Without a TTL, an old row survives the merge.
  await store.insert('trades', [trade({ venue: 'binance', market: 'BTCUSDT', asset: 'bitcoin', quote: 'USDT', trade_id: 'old-again', ts: old, price: 100, quantity: 1 })]);
  await store.client.command({ query: 'OPTIMIZE TABLE trades FINAL' });
  expect(await count("SELECT count() AS n FROM trades WHERE trade_id = 'old-again'")).toBe(1);
});
