import { afterAll, beforeAll, expect, test } from 'vitest';
import { openTestStore } from '../../api/__tests__/harness.ts';
import { seedDemoHistory } from '../simulator/history.ts';

let env: Awaited<ReturnType<typeof openTestStore>>;
beforeAll(async () => (env = await openTestStore()));
afterAll(() => env?.dispose());

test('demo history: two markets per asset every step, ending at the model price, only on an empty store', async () => {
  const now = Date.parse('2026-11-20T12:00:00Z');
  const prices: Record<string, number> = { BTC: 90_000, ETH: 3_000 };
  const options = { days: 2, stepMs: 3_600_000, now, seed: 7, tickers: ['BTC', 'ETH'], priceOf: (t: string) => prices[t]! };
  expect(await seedDemoHistory(env.store, options)).toBe(2 * 2 * 48);

  const rows = await env.store.rows<{ asset: string; venue: string; n: number; first: number; last: number; lastPrice: number }>(
    `SELECT asset, venue, count() AS n, toUnixTimestamp64Milli(min(ts)) AS first, toUnixTimestamp64Milli(max(ts)) AS last, argMax(price, ts) AS lastPrice
     FROM trades GROUP BY asset, venue ORDER BY asset, venue`,
  );
  expect(rows).toEqual(
    ['bitcoin', 'ethereum'].flatMap((asset) =>
      ['binance', 'coinbase'].map((venue) => ({ asset, venue, n: 48, first: now - 48 * 3_600_000, last: now - 3_600_000, lastPrice: asset === 'bitcoin' ? 90_000 : 3_000 })),
    ),
  );
  // A restarted demo keeps its data: nothing is added once the store holds trades.
  expect(await seedDemoHistory(env.store, options)).toBe(0);
});
