import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { openTestStore } from '../../test/support/harness.ts';
import type { Store } from '../../infra/store.ts';
import { DemoHistoryIncompleteError, seedDemoHistory } from '../history.ts';

let env: Awaited<ReturnType<typeof openTestStore>>;
beforeAll(async () => (env = await openTestStore()));
afterAll(() => env?.dispose());

const hourMs = 3_600_000;

interface PerMarket {
  asset: string;
  venue: string;
  n: number;
  ids: number;
  first: number;
  last: number;
  lastPrice: number;
}

/** Per asset and venue in [from, to): trades, distinct trade ids, first and last time, last price (rows as stored, no FINAL). */
async function perMarket(from: number, to: number): Promise<PerMarket[]> {
  return env.store.rows<PerMarket>(
    `SELECT asset, venue, count() AS n, uniqExact(trade_id) AS ids, toUnixTimestamp64Milli(min(ts)) AS first, toUnixTimestamp64Milli(max(ts)) AS last,
            argMax(price, ts) AS lastPrice
     FROM trades WHERE ts >= fromUnixTimestamp64Milli({from:Int64}, 'UTC') AND ts < fromUnixTimestamp64Milli({to:Int64}, 'UTC')
     GROUP BY asset, venue ORDER BY asset, venue`,
    { from, to },
  );
}

/** What a complete history of `hours` hourly steps ending at `now` holds per asset and venue. */
const complete = (prices: Record<string, number>, now: number, hours: number) =>
  Object.entries(prices).flatMap(([asset, lastPrice]) =>
    ['binance', 'coinbase'].map((venue) => ({ asset, venue, n: hours, ids: hours, first: now - hours * hourMs, last: now - hourMs, lastPrice })),
  );

function capturingLog() {
  const lines: { level: number; msg: string; batches?: string; trades?: string }[] = [];
  const log = pino({ level: 'info' }, new Writable({ write: (chunk, _enc, done) => (lines.push(JSON.parse(String(chunk))), done()) }));
  return { log, lines };
}

test('demo history: two markets per asset every step, ending at the model price, only on an empty store, once', async () => {
  const now = Date.parse('2026-11-20T12:00:00Z');
  const prices: Record<string, number> = { BTC: 90_000, ETH: 3_000 };
  const options = { days: 2, stepMs: hourMs, now, seed: 7, tickers: ['BTC', 'ETH'], priceOf: (t: string) => prices[t]! };
  expect(await seedDemoHistory(env.store, options)).toBe(2 * 2 * 48);
  expect(await perMarket(0, now)).toEqual(complete({ bitcoin: 90_000, ethereum: 3_000 }, now, 48));
  // A restarted demo keeps its data: nothing is added once the seeding is complete.
  expect(await seedDemoHistory(env.store, { ...options, seed: 8, now: now + hourMs })).toBe(0);
  expect(await perMarket(0, now + hourMs)).toEqual(complete({ bitcoin: 90_000, ethereum: 3_000 }, now, 48));
  const recorded = await env.store.rows<{ state: string }>('SELECT state FROM demo_history ORDER BY written_at');
  expect(recorded.map((r) => r.state)).toEqual(['started', 'complete']);
});

test('a seeding killed after some inserts is completed at the next start with the first plan: every trade once, candles counted once', async () => {
  await env.store.client.command({ query: 'TRUNCATE TABLE trades' });
  await env.store.client.command({ query: 'TRUNCATE TABLE demo_history' });
  await env.store.client.command({ query: 'TRUNCATE TABLE candles_1m' });
  const now = Date.parse('2026-10-01T00:00:00Z');
  const prices: Record<string, number> = { BTC: 80_000, ETH: 2_500, SOL: 140 };
  const options = { days: 3, stepMs: hourMs, now, seed: 21, tickers: ['BTC', 'ETH', 'SOL'], priceOf: (t: string) => prices[t]!, batchRows: 50 };
  const total = 3 * 2 * 72;

  // The process dies right after the store took the 4th batch, before the seeding learned it did.
  let inserts = 0;
  const dying: Store = {
    ...env.store,
    async insert(table, rows, token) {
      await env.store.insert(table, rows, token);
      if (table === 'trades' && ++inserts === 4) throw new Error('SIGKILL');
    },
  };
  await expect(seedDemoHistory(dying, options)).rejects.toThrow('SIGKILL');
  const [partial] = await env.store.rows<{ n: number }>('SELECT count() AS n FROM trades');
  expect(partial?.n).toBe(4 * 50);

  // The next start passes a new seed, time and prices (as infra/roles/main.ts does): the first plan wins.
  const { log, lines } = capturingLog();
  const restart = { ...options, seed: 22, now: now + 5 * hourMs, priceOf: () => 1, log };
  expect(await seedDemoHistory(env.store, restart)).toBe(total);
  const expected = complete({ bitcoin: 80_000, ethereum: 2_500, solana: 140 }, now, 72);
  expect(await perMarket(0, Date.parse('2030-01-01T00:00:00Z'))).toEqual(expected);
  const [counted] = await env.store.rows<{ n: number }>('SELECT sum(trade_count) AS n FROM candles_1m');
  expect(counted?.n).toBe(total);
  // Progress every 5 inserts and at the last: done/total.
  const batches = Math.ceil(total / 50);
  expect(lines.filter((l) => l.batches).map((l) => l.batches)).toEqual([`5/${batches}`, `${batches}/${batches}`]);
  expect(lines.at(-1)).toMatchObject({ trades: `${total}/${total}` });
  expect(lines[0]).toMatchObject({ level: 40 });

  // Complete now: later starts add nothing.
  expect(await seedDemoHistory(env.store, restart)).toBe(0);
  expect(await perMarket(0, Date.parse('2030-01-01T00:00:00Z'))).toEqual(expected);
});

test('a store with trades and no recorded seeding is left alone; one whose trades do not match the record is refused', async () => {
  await env.store.client.command({ query: 'TRUNCATE TABLE demo_history' });
  const options = { days: 1, stepMs: hourMs, now: Date.parse('2026-12-01T00:00:00Z'), seed: 31, tickers: ['BTC'], priceOf: () => 90_000 };
  expect(await seedDemoHistory(env.store, options)).toBe(0);
  expect(await env.store.rows('SELECT * FROM demo_history')).toEqual([]);

  // A recorded seeding whose trades were (say) deleted by hand since: never marked complete.
  await env.store.client.command({ query: 'TRUNCATE TABLE trades' });
  expect(await seedDemoHistory(env.store, options)).toBe(24 * 2);
  await env.store.client.command({ query: "DELETE FROM demo_history WHERE state = 'complete'" });
  await env.store.client.command({ query: "DELETE FROM trades WHERE trade_id = 'demo-history-3'" });
  await expect(seedDemoHistory(env.store, options)).rejects.toThrow(DemoHistoryIncompleteError);
});
