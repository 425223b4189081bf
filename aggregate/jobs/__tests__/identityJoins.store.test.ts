// Joining a discovered asset into the asset the operator maps its ticker to: its history moves
// (in the target's units), nothing of the old id stays, and running again moves only what is new.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { openTestStore, silentLog, trade, type TradeRow } from '../../../test/support/harness.ts';
import type { Store } from '../../../infra/store.ts';
import { joinIdentities, joinIdentity } from '../identityJoins.ts';

const alias = '1000pepe--binance-futures';
const mapping = { venue: 'binance-futures', ticker: '1000PEPE', asset: 'pepe', scale: 1000, note: '' };
const T = Date.UTC(2026, 10, 20, 12);

/** Trades of the thousand-PEPE perpetual: prices per 1000 PEPE, quantities in thousands. */
const aliasTrades: TradeRow[] = Array.from({ length: 6 }, (_, i) =>
  trade({ venue: 'binance-futures', market: '1000PEPEUSDT', asset: alias, quote: 'USDT', trade_id: `f${i}`, ts: T + i * 20_000, price: 0.01 + i * 0.0001, quantity: 50 + i }),
);
const pepeTrades: TradeRow[] = [trade({ venue: 'binance', market: 'PEPEUSDT', asset: 'pepe', quote: 'USDT', trade_id: 's1', ts: T, price: 0.00001, quantity: 1e6 })];
const liquidation = { asset: alias, venue: 'binance-futures', market: '1000PEPEUSDT', quote: 'USDT', liquidation_id: 'l1', ts: T + 5_000, received_at: T + 5_000, price: 0.0102, quantity: 200, position_side: 'long', sampled: true };
const gap = { asset: alias, venue: 'binance-futures', market: '1000PEPEUSDT', quote: 'USDT', gap_id: 'g1', version: 1, event_id: 'g1/1', cause: 'reconnect', state: 'open', reason: '', from_ts: T, to_ts: T + 1000, recovered: 0, ts: T + 1000, received_at: T + 1000 };

let store: Store;
let dispose: () => Promise<void>;
beforeAll(async () => {
  ({ store, dispose } = await openTestStore());
  await store.insert('trades', [...aliasTrades, ...pepeTrades]);
  await store.insert('liquidations', [liquidation]);
  await store.insert('trade_gaps', [gap]);
});
afterAll(() => dispose());

const recomputeRequests = () =>
  store
    .rows<{ asset: string; from: number | string; reason: string }>('SELECT asset, toUnixTimestamp64Milli(from_ts) AS from, reason FROM index_recompute_requests ORDER BY requested_at')
    .then((rows) => rows.map((r) => ({ ...r, from: Number(r.from) })));
const rowsOf = (table: string, asset: string) => store.rows<{ n: number }>('SELECT count() AS n FROM {table:Identifier} WHERE asset = {asset:String}', { table, asset }).then(([r]) => Number(r!.n));

describe('joinIdentity', () => {
  test('moves the trades in the target\'s units; the candles, first print and liquidations follow; nothing of the alias stays', async () => {
    expect(await rowsOf('candles_1m', alias)).toBeGreaterThan(0);
    expect(await rowsOf('trade_gaps', alias)).toBe(1);
    const outcome = await joinIdentity(store, mapping);
    expect(outcome).toEqual({ alias, target: 'pepe', trades: 6, liquidations: 1 });

    const moved = await store.rows<{ trade_id: string; price: number; quantity: number }>(
      "SELECT trade_id, price, quantity FROM trades WHERE asset = 'pepe' AND venue = 'binance-futures' ORDER BY trade_id",
    );
    expect(moved.map((t) => t.trade_id)).toEqual(aliasTrades.map((t) => t.trade_id));
    moved.forEach((t, i) => {
      expect(t.price).toBeCloseTo(aliasTrades[i]!.price / 1000, 15);
      expect(t.quantity).toBeCloseTo(aliasTrades[i]!.quantity * 1000, 6);
    });
    // The views rolled pepe's candles of that market from the moved trades: the same quote volume, a thousand times the base volume.
    const [candles] = await store.rows<{ volume: number; quote_volume: number }>(
      "SELECT sum(volume) AS volume, sum(quote_volume) AS quote_volume FROM candles_1m WHERE asset = 'pepe' AND venue = 'binance-futures'",
    );
    expect(candles!.volume).toBeCloseTo(aliasTrades.reduce((s, t) => s + t.quantity * 1000, 0), 6);
    expect(candles!.quote_volume).toBeCloseTo(aliasTrades.reduce((s, t) => s + t.price * t.quantity, 0), 9);
    const [first] = await store.rows<{ first: number }>("SELECT toUnixTimestamp64Milli(min(first_ts)) AS first FROM asset_first_prints WHERE asset = 'pepe' AND venue = 'binance-futures'");
    expect(first!.first).toBe(T);
    const [liq] = await store.rows<{ price: number; quantity: number }>("SELECT price, quantity FROM liquidations WHERE asset = 'pepe'");
    expect(liq!.price).toBeCloseTo(0.0102 / 1000, 15);
    expect(liq!.quantity).toBeCloseTo(200_000, 6);
    expect(await rowsOf('trade_gaps', 'pepe')).toBe(1);

    for (const table of ['trades', 'candles_1m', 'candles_1h', 'candles_1d', 'asset_first_prints', 'asset_price_extremes', 'market_seconds', 'liquidations', 'liquidations_1m', 'trade_gaps']) {
      expect(await rowsOf(table, alias), table).toBe(0);
    }
    const [row] = await store.rows<{ target: string; scale: number; trades_moved: number }>('SELECT target, scale, trades_moved FROM asset_aliases FINAL WHERE alias = {alias:String}', { alias });
    expect(row).toEqual({ target: 'pepe', scale: 1000, trades_moved: 6 });
    // The index runner is asked to compute pepe again from the first moved trade (aggregate/__tests__/indexRunner.store.test.ts takes it).
    expect(await recomputeRequests()).toEqual([{ asset: 'pepe', from: T, reason: 'identity-join' }]);
  });

  test('run again: nothing to do; a trade still sent under the alias moves, one the target holds does not count twice', async () => {
    expect(await joinIdentity(store, mapping)).toBeUndefined();
    const late = trade({ venue: 'binance-futures', market: '1000PEPEUSDT', asset: alias, quote: 'USDT', trade_id: 'f9', ts: T + 300_000, price: 0.011, quantity: 7 });
    const replayed = { ...aliasTrades[0]!, received_at: T + 400_000 };
    await store.insert('trades', [late, replayed]);
    const outcomes = await joinIdentities(store, [mapping], silentLog);
    expect(outcomes).toEqual([{ alias, target: 'pepe', trades: 1, liquidations: 0 }]);
    expect(await rowsOf('trades', alias)).toBe(0);
    const [candles] = await store.rows<{ trades: number }>("SELECT sum(trade_count) AS trades FROM candles_1m WHERE asset = 'pepe' AND venue = 'binance-futures'");
    expect(Number(candles!.trades)).toBe(7);
    const [row] = await store.rows<{ trades_moved: number }>('SELECT trades_moved FROM asset_aliases FINAL WHERE alias = {alias:String}', { alias });
    expect(Number(row!.trades_moved)).toBe(7);
    // Asked again from the first trade found under the alias (the replayed copy, at T); the run with nothing to do asked nothing.
    expect(await recomputeRequests()).toEqual([{ asset: 'pepe', from: T, reason: 'identity-join' }, { asset: 'pepe', from: T, reason: 'identity-join' }]);
  });
});
