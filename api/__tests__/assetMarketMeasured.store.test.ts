import { afterAll, beforeAll, expect, test } from 'vitest';
import { loadAssetMarkets } from '../read/assetMarket.ts';
import { openTestStore, trade } from '../../test/support/harness.ts';

let env: Awaited<ReturnType<typeof openTestStore>>;
const now = Date.now();
const second = Math.floor(now / 1000) - 5;

beforeAll(async () => {
  env = await openTestStore();
  await env.store.insert('trades', [
    trade({ venue: 'binance', market: 'BTCUSDT', asset: 'bitcoin', quote: 'USDT', trade_id: '1', ts: second * 1000, price: 100_000, quantity: 1 }),
    trade({ venue: 'binance', market: 'ETHUSDT', asset: 'ethereum', quote: 'USDT', trade_id: '1', ts: second * 1000, price: 4_000, quantity: 1 }),
  ]);
});
afterAll(() => env?.dispose());

/** Index rows as the index runner writes them: bitcoin priced from trades, ethereum carried by the fail-closed rule. */
const tick = (asset: string, price: number, status: 'ok' | 'fail_closed') => ({
  asset, second, price, status, constituents: status === 'ok' ? ['binance:BTCUSDT'] : [], excluded: {},
  volume: 1, volume_usd: price, trade_count: 1, last_trade_at: second * 1000, computed_at: now,
});

test('a price carried by the fail-closed rule is not measured, in the coin snapshot as in /v1/prices', async () => {
  await env.store.insert('index_ticks', [tick('bitcoin', 100_000, 'ok'), tick('ethereum', 4_000, 'fail_closed')]);
  const markets = await loadAssetMarkets(env.store, now);
  const byId = new Map(markets.map((m) => [m.asset.id, m]));
  expect(byId.get('bitcoin')).toMatchObject({ price: 100_000, measured: true });
  expect(byId.get('ethereum')).toMatchObject({ price: 4_000, measured: false });
});
