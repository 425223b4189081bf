// Every example query of infra/SCHEMA.md (schemaExamples in infra/schemaDoc.ts), run as a data
// engineer runs it: through the read-only SQL endpoint, with the reader's credentials, on a store
// the API serves at the same time. Each must answer, and where the API serves the same figure
// (candles, the index price, 24 h volumes, liquidations) the numbers must be the API's.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { usdQuotes } from '../../../aggregate/currency/currencies.ts';
import { KeyStore } from '../../../api/keys.ts';
import type { Candle, OhlcResponse } from '../../../api/routes/ohlc.ts';
import type { LiquidationsResponse } from '../../../api/routes/liquidations.ts';
import type { PricesResponse } from '../../../api/read/prices.ts';
import { startApi, type ApiServer } from '../../../api/server.ts';
import { computeIndex, get, openTestStore, silentLog, testConfig, trade, type TradeRow } from '../../../test/support/harness.ts';
import { schemaExamples } from '../../schemaDoc.ts';
import { startSqlServer, type SqlServer } from '../sqlServer.ts';

const minute = 60_000;
const hour = 60 * minute;
const day = 24 * hour;
const password = randomBytes(18).toString('base64url');
// The engine's now() and the API's Date.now() are the same clock; the seed keeps clear of the windows' edges.
const now = Date.now();

/** A small deterministic generator, so a failure replays the same rows. */
function random(seed: number): () => number {
  let s = seed;
  return () => {
    s = (s * 1_103_515_245 + 12_345) % 2 ** 31;
    return s / 2 ** 31;
  };
}

/**
 * 36 days of bitcoin on a USD, a USDT and a EUR market (the EUR one outside the index, at twice the
 * price so that it would show), without trades on days 10 and 11 back; prices in quarters and
 * quantities in eighths, so sums are exact in any order.
 */
function bitcoinTrades(): TradeRow[] {
  const rnd = random(7);
  const markets = [
    { venue: 'coinbase', market: 'BTC-USD', quote: 'USD' },
    { venue: 'binance', market: 'BTCUSDT', quote: 'USDT' },
    { venue: 'kraken', market: 'XBTEUR', quote: 'EUR' },
  ];
  const rows: TradeRow[] = [];
  for (let n = 0; n < 600; n++) {
    const ts = now - minute - Math.floor(rnd() * 36 * day);
    if (Math.floor((now - ts) / day) === 10 || Math.floor((now - ts) / day) === 11) continue;
    const m = markets[n % markets.length]!;
    const price = 60_000 + Math.round(rnd() * 8_000) / 4;
    rows.push(trade({ ...m, asset: 'bitcoin', trade_id: `b${n}`, ts, price: m.quote === 'EUR' ? price * 2 : price, quantity: (1 + Math.floor(rnd() * 40)) / 8 }));
  }
  return rows;
}

/** Ethereum on two USD-quoted markets over the last 50 minutes: what the index price is computed from. */
function ethereumTrades(): TradeRow[] {
  const rnd = random(11);
  const markets = [
    { venue: 'coinbase', market: 'ETH-USD', quote: 'USD' },
    { venue: 'binance', market: 'ETHUSDT', quote: 'USDT' },
  ];
  return Array.from({ length: 300 }, (_, n) => {
    const m = markets[n % markets.length]!;
    return trade({ ...m, asset: 'ethereum', trade_id: `e${n}`, ts: now - 50 * minute + n * 10_000, price: 3_000 + Math.round(rnd() * 80) / 4, quantity: (1 + Math.floor(rnd() * 16)) / 8 });
  });
}

/**
 * Solana on three markets over the last day, one trade 23 h 58 min back (in the 24 h, before the
 * first whole hour of them) and two just older than 24 h (in no 24 h figure).
 */
function solanaTrades(): TradeRow[] {
  const rnd = random(13);
  const markets = [
    { venue: 'binance', market: 'SOLUSDT', quote: 'USDT' },
    { venue: 'coinbase', market: 'SOL-USD', quote: 'USD' },
    { venue: 'okx', market: 'SOL-USDT', quote: 'USDT' },
  ];
  const at = (n: number, ts: number) => {
    const m = markets[n % markets.length]!;
    return trade({ ...m, asset: 'solana', trade_id: `s${n}`, ts, price: 150 + Math.round(rnd() * 40) / 4, quantity: (1 + Math.floor(rnd() * 80)) / 8 });
  };
  const rows = Array.from({ length: 90 }, (_, n) => at(n, now - 2 * minute - Math.floor(rnd() * (day - 10 * minute))));
  return [...rows, at(90, now - day + 2 * minute), at(91, now - day - 3 * minute), at(92, now - day - hour)];
}

/** Liquidations on three venues in the last day (one on a BTC-quoted market, valued in no USD figure), and one older. */
function liquidationRows() {
  const row = (id: string, venue: string, market: string, quote: string, ago: number, price: number, quantity: number, side: 'long' | 'short') => ({
    asset: 'bitcoin', venue, market, quote, liquidation_id: id, ts: now - ago, received_at: now - ago, price, quantity, position_side: side, sampled: false,
  });
  return [
    row('l1', 'binance-futures', 'BTCUSDT', 'USDT', 2 * hour, 90_000, 0.5, 'long'),
    row('l2', 'binance-futures', 'BTCUSDT', 'USDT', 5 * hour, 91_000, 0.25, 'long'),
    row('l3', 'binance-futures', 'BTCUSDT', 'USDT', 9 * hour, 89_000, 1, 'short'),
    row('l4', 'bybit-linear', 'BTCUSD', 'USD', day - 2 * minute, 88_000, 2, 'short'),
    row('l5', 'bybit-linear', 'BTCUSDC', 'USDC', 30 * minute, 90_500, 0.125, 'long'),
    row('l6', 'bitmex', 'XBTBTC', 'BTC', 3 * hour, 1, 4, 'long'),
    row('l7', 'okx-swap', 'BTC-USDT-SWAP', 'USDT', day + 5 * minute, 87_000, 3, 'long'),
  ];
}

let env: Awaited<ReturnType<typeof openTestStore>>;
let sql: SqlServer;
let api: ApiServer;
let apiKey: string;
const bitcoin = bitcoinTrades();
const solana = solanaTrades();

beforeAll(async () => {
  env = await openTestStore();
  await env.store.insert('trades', [...bitcoin, ...ethereumTrades(), ...solana]);
  await env.store.insert('liquidations', liquidationRows());
  // The index of the last two hours is enough for ethereum's hour.
  await computeIndex(env.store, Date.now(), 2 * hour);
  apiKey = (await new KeyStore(env.store).create('schema-examples')).key;
  api = await startApi({ store: env.store, config: testConfig(), log: silentLog });
  sql = await startSqlServer({
    path: env.dir, database: 'mds', host: '127.0.0.1', port: 0, user: 'reader', password, maxConcurrentQueries: 1, connections: testConfig(), log: silentLog,
    limits: { max_execution_time: 20, max_result_rows: 100_000, max_result_bytes: 50_000_000, max_memory_usage: 500_000_000, max_threads: 1 },
  });
}, 120_000);
afterAll(async () => {
  await sql?.close();
  await api?.close();
  await env?.dispose();
});

/** The parameters the examples bind, as the service binds them (SCHEMA.md says what each is). */
const exampleParams = { usd_quotes: `[${usdQuotes.map((q) => `'${q}'`).join(',')}]` };

/** The example as curl would send it: the SQL as the body, its parameters in the URL, basic auth, rows as JSONEachRow. */
async function runExample(query: string): Promise<Record<string, unknown>[]> {
  const params = Object.entries(exampleParams).filter(([name]) => query.includes(`{${name}:`));
  const url = `${sql.url}/?${new URLSearchParams([['default_format', 'JSONEachRow'], ...params.map(([name, value]) => [`param_${name}`, value])])}`;
  const res = await fetch(url, {
    method: 'POST',
    body: query,
    headers: { authorization: `Basic ${Buffer.from(`reader:${password}`).toString('base64')}` },
  });
  const text = await res.text();
  expect(res.status, text).toBe(200);
  return text.split('\n').filter(Boolean).map((line) => JSON.parse(line) as Record<string, unknown>);
}

async function fromApi<T>(path: string): Promise<T> {
  const res = await get(api.url + path, { 'x-api-key': apiKey });
  expect(res.status, res.text).toBe(200);
  return res.json as T;
}

/** Unix ms of a DateTime as the engine writes it in JSON (UTC). */
const unixMs = (dateTime: unknown) => Date.parse(`${String(dateTime).replace(' ', 'T')}Z`);

/** Relative 1e-12 (exact for zero): sums of the same values in another order. */
function expectSame(actual: number, expected: number, what: string) {
  expect(Math.abs(actual - expected) <= 1e-12 * Math.max(Math.abs(actual), Math.abs(expected)), `${what}: ${actual} vs ${expected}`).toBe(true);
}

/** The example's rows against the API's answer on the same store, by the example's title. */
const apiChecks = new Map<string, (rows: Record<string, unknown>[]) => Promise<void>>([
  [
    'Daily index candles of bitcoin (its USD and USD-stablecoin markets, as /v1/coins/{id}/ohlc), last 30 days',
    async (rows) => {
      const { candles } = await fromApi<OhlcResponse>('/v1/coins/bitcoin/ohlc?interval=1d');
      const first = unixMs(rows[0]!.bucket);
      // The days that start in the last 30 days, the two without trades left out (the API repeats a close there with volume 0).
      expect(first - (now - 30 * day)).toBeGreaterThanOrEqual(0);
      expect(first - (now - 30 * day)).toBeLessThan(day);
      // About 30 days, at least one whole UTC day without trades among them.
      expect(rows.length).toBeGreaterThanOrEqual(25);
      expect(candles.some((c) => c.timestamp >= first && c.volume === 0)).toBe(true);
      const traded = candles.filter((c) => c.timestamp >= first && c.volume > 0);
      expect(rows.map((r) => unixMs(r.bucket))).toEqual(traded.map((c) => c.timestamp));
      rows.forEach((r, i) => {
        const c: Candle = traded[i]!;
        for (const field of ['open', 'high', 'low', 'close', 'volume'] as const) expectSame(Number(r[field]), c[field], `${String(r.bucket)} ${field}`);
      });
    },
  ],
  [
    'The index price of ethereum, second by second, over the last hour',
    async (rows) => {
      const { prices } = await fromApi<PricesResponse>('/v1/prices?ids=ethereum');
      expect(rows.length).toBeGreaterThan(100);
      expect(rows.every((r) => unixMs(r.second) >= now - hour && ['ok', 'single_venue', 'fail_closed', 'none'].includes(String(r.status)))).toBe(true);
      // The latest second of the example is the current index price /v1/prices serves.
      expect(prices.map((p) => p.assetId)).toEqual(['ethereum']);
      expect(rows.at(-1)!.price).toBe(prices[0]!.price);
    },
  ],
  [
    '24 h traded volume per venue and market of solana, in quote units',
    async (rows) => {
      const inDay = solana.filter((t) => t.ts >= now - day);
      // USDT at par here (no tether market in the store), so the API's USD volumes are the quote volumes.
      const expected = new Map<string, { quote_volume: number; trades: number }>();
      for (const venue of ['binance', 'coinbase', 'okx']) {
        const { exchange } = await fromApi<{ exchange: { markets: { market: string; assetId: string; trades24h: number; volume24h: number }[] } }>(`/v1/exchanges/${venue}`);
        for (const m of exchange.markets.filter((m) => m.assetId === 'solana')) expected.set(`${venue} ${m.market}`, { quote_volume: m.volume24h, trades: m.trades24h });
      }
      const { markets } = await fromApi<{ markets: { venueId: string; pair: string; volume24h: number }[] }>('/v1/coins/solana/markets');
      expect(rows.map((r) => `${String(r.venue)} ${String(r.market)}`).sort()).toEqual([...expected.keys()].sort());
      expect(markets.length).toBe(rows.length);
      for (const r of rows) {
        const key = `${String(r.venue)} ${String(r.market)}`;
        expectSame(Number(r.quote_volume), expected.get(key)!.quote_volume, `${key} volume vs /v1/exchanges`);
        expect(Number(r.trades), key).toBe(expected.get(key)!.trades);
        // /v1/coins/{id}/markets sums the raw trades of the same 24 h.
        const market = markets.find((m) => m.venueId === r.venue && m.pair === `SOL/${String(r.quote)}`)!;
        expectSame(Number(r.quote_volume), market.volume24h, `${key} volume vs /v1/coins/solana/markets`);
      }
      // Every trade of the 24 h counted once, none older.
      expect(rows.reduce((n, r) => n + Number(r.trades), 0)).toBe(inDay.length);
      expect(rows.map((r) => Number(r.quote_volume))).toEqual(rows.map((r) => Number(r.quote_volume)).sort((a, b) => b - a));
    },
  ],
  [
    'Long and short liquidations per venue over the last day, in USD (markets quoted in USD or a USD stablecoin)',
    async (rows) => {
      const { venues } = await fromApi<LiquidationsResponse>('/v1/liquidations?range=24h');
      const fromTheApi = venues.flatMap((v) => (['long', 'short'] as const).filter((side) => v[side] > 0).map((side) => ({ venue: v.venueId, position_side: side, usd: v[side] })));
      const key = (r: { venue?: unknown; position_side?: unknown }) => `${String(r.venue)} ${String(r.position_side)}`;
      expect(rows.map(key).sort()).toEqual(fromTheApi.map(key).sort());
      for (const r of rows) expectSame(Number(r.usd), fromTheApi.find((a) => key(a) === key(r))!.usd, key(r));
      expect(fromTheApi.length).toBe(4);
    },
  ],
]);

describe('the example queries of infra/SCHEMA.md, through the SQL endpoint, against the API', () => {
  for (const example of schemaExamples) {
    it(example.title, async () => {
      const rows = await runExample(example.sql);
      expect(rows.length).toBeGreaterThan(0);
      const check = apiChecks.get(example.title);
      expect(check, `no check against the API for "${example.title}" in apiChecks`).toBeDefined();
      await check!(rows);
    });
  }

  it('has a check against the API for every example, and an example for every check', () => {
    expect([...apiChecks.keys()].sort()).toEqual(schemaExamples.map((e) => e.title).sort());
  });
});
