// Every route of the spec (../shared/spec/market-data-api.md) answered from a populated store, and
// each body validated against the schema written by hand from the spec (specSchemas.ts), not
// against our own generated OpenAPI document.
import { Ajv2020 } from 'ajv/dist/2020.js';
import { expect, test } from 'vitest';
import { importEtfFlowsDir } from '../../aggregate/jobs/etfFlows.ts';
import { day, hour, T, useFixtureApi } from '../../api/__tests__/assetMarketFixture.ts';
import { get, silentLog } from '../support/harness.ts';
import { coinRowWithSparkline, errorCodesByStatus, errorSchema, responseSchemas, type JsonSchema } from './specSchemas.ts';

// The asset-market fixture, and a row or more of every other table a route reads.
const api = useFixtureApi('spec-conformance', ['ars', 'brl', 'sek', 'eur'], async (store) => {
  await store.insert('market_quality', [
    { asset: 'bitcoin', venue: 'binance', market: 'BTCUSDT', quote: 'USDT', ts: T - 5_000, spread_bps: 0.5, depth_bid_2: 5e6, depth_ask_2: 4e6, depth_bid_1: 3e6, depth_ask_1: 2e6, cost_buy: { '10000': 0.2, '1000000': null }, cost_sell: { '10000': 0.3, '1000000': null }, liquidity_score: 870 },
  ]);
  await store.insert('liquidations', [
    { asset: 'bitcoin', venue: 'binance-futures', market: 'BTCUSDT', quote: 'USDT', liquidation_id: 'l1', ts: T - hour, received_at: T - hour, price: 99_000, quantity: 0.5, position_side: 'long', sampled: true },
    { asset: 'ethereum', venue: 'bybit-linear', market: 'ETHUSDT', quote: 'USDT', liquidation_id: 'l2', ts: T - 2 * hour, received_at: T - 2 * hour, price: 3_000, quantity: 4, position_side: 'short', sampled: false },
  ]);
  await importEtfFlowsDir(store, new URL('../../infra/reference/etf-flows-demo/', import.meta.url).pathname, { log: silentLog, now: Date.UTC(2026, 10, 21) });
  // 40 daily fear & greed readings up to today (aggregate/jobs/fearGreed.ts writes them from 13 days of history on).
  await store.insert('fear_greed_daily', Array.from({ length: 40 }, (_, i) => ({
    date: new Date(T - (39 - i) * day).toISOString().slice(0, 10), score: 20 + i, label: i < 5 ? 'Extreme Fear' : 'Neutral',
    volatility_score: 40, momentum_score: i < 30 ? null : 60, dominance_score: 50, realized_volatility: 0.02, max_drawdown: 0.1,
    trend: 0.01, volume_ratio: 1.2, dominance_change: -0.3, history_days: 30 + i, computed_at: T,
  })));
  // One indexed chain: a pool of two tokens and swaps in the last 24 h and the 24 h before.
  await store.insert('chain_registry', [{ chain: 'sim-evm', name: 'Simulated EVM', updated_at: T - day, genesis_hash: '0xabc' }]);
  await store.insert('chain_blocks', [{ chain: 'sim-evm', number: 1, hash: '0x01', parent_hash: '0x00', ts: Math.floor((T - 3 * day) / 1000) }]);
  await store.insert('chain_pools', [{ chain: 'sim-evm', dex: 'uniswap-v2', kind: 'v2', factory: '0xf', pool: '0xp1', token0: '0xa', token1: '0xb', fee: null, created_block: 1, created_tx: '0xt', created_log_index: 0 }]);
  await store.insert('chain_swaps', [T - hour, T - 30 * hour].map((ts, i) => ({
    chain: 'sim-evm', block: 2 + i, ts: Math.floor(ts / 1000), tx: `0xs${i}`, log_index: 0, dex: 'uniswap-v2', pool: '0xp1',
    amount0_in: '1000', amount1_in: '0', amount0_out: '0', amount1_out: '2000', usd: 1_500 + i, usd_token: '0xa', usd_by: 'par:tether',
  })));
});

const ajv = new Ajv2020({ strict: true, allErrors: true });
const validators = new Map<JsonSchema, ReturnType<typeof ajv.compile>>();
function expectValid(schema: JsonSchema, body: unknown, label: string) {
  const validate = validators.get(schema) ?? ajv.compile(schema);
  validators.set(schema, validate);
  expect(validate(body), `${label}: ${JSON.stringify(validate.errors?.slice(0, 5))}`).toBe(true);
}

/** [spec path, request] for every route of section 4, with the main variants of its parameters. */
const requests: [path: string, url: string][] = [
  ['/v1/coins', '/v1/coins'],
  ['/v1/coins', '/v1/coins?limit=2&page=2'],
  ['/v1/coins', '/v1/coins?limit=3&page=2&offset=1'],
  ['/v1/coins', '/v1/coins?ids=bitcoin,ethereum,tether'],
  ['/v1/coins/{id}', '/v1/coins/bitcoin'],
  ['/v1/coins/{id}', '/v1/coins/ethereum'],
  ['/v1/coins/{id}', '/v1/coins/tether'],
  ['/v1/coins/{id}', '/v1/coins/solana'],
  ['/v1/coins/{id}/ohlc', '/v1/coins/bitcoin/ohlc'],
  ...['1m', '5m', '15m', '4h', '1d', '1w'].map((i): [string, string] => ['/v1/coins/{id}/ohlc', `/v1/coins/bitcoin/ohlc?interval=${i}`]),
  ['/v1/coins/{id}/ohlc', '/v1/coins/bitcoin/ohlc?interval=1d&vs=eur'],
  ['/v1/coins/{id}/ohlc', '/v1/coins/ethereum/ohlc?vs=btc'],
  ['/v1/coins/{id}/chart', '/v1/coins/bitcoin/chart'],
  ...['1h', '7d', '30d', '90d', '1y', 'max'].map((r): [string, string] => ['/v1/coins/{id}/chart', `/v1/coins/bitcoin/chart?range=${r}`]),
  ['/v1/coins/{id}/chart', '/v1/coins/bitcoin/chart?range=30d&metric=market_cap&vs=eur'],
  ['/v1/coins/{id}/chart', '/v1/coins/dogecoin/chart?range=max'],
  ['/v1/coins/{id}/markets', '/v1/coins/bitcoin/markets'],
  ['/v1/coins/{id}/markets', '/v1/coins/bitcoin/markets?vs=eur'],
  ['/v1/coins/{id}/markets', '/v1/coins/bitcoin/markets?vs=btc'],
  ['/v1/prices', '/v1/prices'],
  ['/v1/prices', '/v1/prices?ids=bitcoin,ethereum,no-such-coin'],
  ['/v1/exchanges/{id}', '/v1/exchanges/binance'],
  ['/v1/exchanges/{id}', '/v1/exchanges/kraken'],
  ['/v1/etf-flows', '/v1/etf-flows'],
  ['/v1/market-status', '/v1/market-status'],
  ['/v1/global', '/v1/global'],
  ['/v1/chains', '/v1/chains'],
  ['/v1/fear-greed/history', '/v1/fear-greed/history'],
  ['/v1/liquidations', '/v1/liquidations'],
  ['/v1/liquidations', '/v1/liquidations?range=1h'],
  ['/v1/liquidations', '/v1/liquidations?range=30d&venue=binance-futures'],
  ['/v1/categories', '/v1/categories'],
  ['/v1/categories', '/v1/categories?ids=layer-1,meme&all=true'],
  ['/v1/new-coins', '/v1/new-coins'],
  ['/v1/new-coins', '/v1/new-coins?limit=1'],
];

test('the requests cover every route of the spec', () => {
  expect(new Set(requests.map(([path]) => path))).toEqual(new Set(Object.keys(responseSchemas)));
});

test.each(requests)('%s: GET %s is 200 with the rate-limit and request-id headers, and its body matches the spec', async (path, url) => {
  const res = await api.get(url);
  expect(res.status, res.text).toBe(200);
  for (const header of ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset', 'x-request-id']) expect(res.headers.get(header), header).toBeTruthy();
  expectValid(responseSchemas[path]!, res.json, url);
});

test('the fixture fills what the schemas check: non-empty lists, nulls and values both', async () => {
  const body = async (url: string) => (await api.get(url)).json as any;
  expect((await body('/v1/coins')).coins.length).toBeGreaterThanOrEqual(4);
  const markets = (await body('/v1/coins/bitcoin/markets')).markets;
  expect(markets.some((m: any) => m.depthBid !== null) && markets.some((m: any) => m.depthBid === null)).toBe(true);
  expect((await body('/v1/coins/bitcoin/chart?range=max')).points.length).toBeGreaterThan(3);
  expect((await body('/v1/chains')).chains).toHaveLength(1);
  expect((await body('/v1/liquidations')).events.length).toBe(2);
  expect((await body('/v1/fear-greed/history')).series).toHaveLength(40);
  expect((await body('/v1/etf-flows')).assets).toHaveLength(3);
  expect((await body('/v1/new-coins')).coins.length).toBeGreaterThan(0);
  expect((await body('/v1/categories')).length).toBeGreaterThan(0);
});

test('sparkline=true: each row carries one more field, a 7-day hourly price array', async () => {
  const res = await api.get('/v1/coins?sparkline=true&ids=bitcoin,ethereum');
  expect(res.status).toBe(200);
  const { coins } = res.json as { coins: unknown[] };
  expect(coins).toHaveLength(2);
  for (const coin of coins) expectValid(coinRowWithSparkline, coin, 'sparkline row');
});

/** [status, request, headers, method] for each error status, in the spec's section 7 or ours (405). */
const errors: [status: number, url: string, headers: 'key' | Record<string, string>, method?: string][] = [
  [400, '/v1/coins/bitcoin/ohlc?vs=xau', 'key'],
  [400, '/v1/coins/bitcoin/chart?range=2d', 'key'],
  [400, '/v1/coins?limit=251', 'key'],
  [401, '/v1/prices', {}],
  [401, '/v1/prices', { 'x-api-key': 'mds_not_a_key_of_ours' }],
  [401, '/v1/global', { authorization: 'Bearer mds_not_a_key_of_ours' }],
  [404, '/v1/coins/no-such-coin', 'key'],
  [404, '/v1/coins/no-such-coin/ohlc', 'key'],
  [404, '/v1/exchanges/no-such-exchange', 'key'],
  [405, '/v1/prices', 'key', 'POST'],
  // No rate known for vnd.
  [503, '/v1/coins/bitcoin/ohlc?vs=vnd', 'key'],
];

test.each(errors)('%i: %s answers the spec error body', async (status, url, headers, method) => {
  const res = await (headers === 'key' ? api.get(url, {}, method) : api.getWithoutKey(url, headers, method));
  expect(res.status, res.text).toBe(status);
  expectValid(errorSchema(status, errorCodesByStatus[status]!), res.json, `${status} ${url}`);
});

test('401 says which: missing_key without a key, invalid_key with an unknown one', async () => {
  expect(((await api.getWithoutKey('/v1/prices')).json as any).error.code).toBe('missing_key');
  expect(((await api.getWithoutKey('/v1/prices', { 'x-api-key': 'mds_not_a_key_of_ours' })).json as any).error.code).toBe('invalid_key');
});

test('429: the request past the quota answers the spec error body', async () => {
  const limited = await api.serve({ env: { QUOTA_PER_HOUR: '1' } });
  try {
    expect((await get(`${limited.url}/v1/global`, { 'x-api-key': api.key })).status).toBe(200);
    const res = await get(`${limited.url}/v1/global`, { 'x-api-key': api.key });
    expect(res.status).toBe(429);
    expectValid(errorSchema(429, errorCodesByStatus[429]!), res.json, '429');
  } finally {
    await limited.close();
  }
});
