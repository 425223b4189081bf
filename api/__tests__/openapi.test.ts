// The OpenAPI document is generated from the route schemas; real responses must validate against it.
import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { KeyStore } from '../keys.ts';
import { startApi, type ApiServer } from '../server.ts';
import { computeIndex, get, openTestStore, silentLog, testConfig, trade } from '../../test/support/harness.ts';

let env: Awaited<ReturnType<typeof openTestStore>>;
let api: ApiServer;
let key: string;
let doc: any;

beforeAll(async () => {
  env = await openTestStore();
  const now = Date.now();
  await env.store.insert(
    'trades',
    Array.from({ length: 40 }, (_, i) =>
      trade({ venue: 'binance', market: 'BTCUSDT', asset: 'bitcoin', quote: 'USDT', trade_id: String(i), ts: now - 3_000_000 + i * 60_000, price: 90_000 + i, quantity: 0.1 }),
    ),
  );
  // Their index price (the btc rate of vs=btc).
  await computeIndex(env.store, now);
  // A fresh book measurement, so the markets and exchanges responses carry scores, not only nulls.
  await env.store.insert('market_quality', [
    { asset: 'bitcoin', venue: 'binance', market: 'BTCUSDT', quote: 'USDT', ts: now, spread_bps: 0.1, depth_bid_2: 5e6, depth_ask_2: 4e6, depth_bid_1: 3e6, depth_ask_1: 2e6, cost_buy: { '10000': 0.2, '1000000': null }, cost_sell: { '10000': 0.3, '1000000': null }, liquidity_score: 870 },
  ]);
  key = (await new KeyStore(env.store).create('openapi-test')).key;
  api = await startApi({ store: env.store, config: testConfig(), log: silentLog });
  doc = (await get(`${api.url}/v1/openapi.json`)).json;
});
afterAll(async () => {
  await api.close();
  await env.dispose();
});

function validator(path: string, status: number) {
  const response = doc.paths[path].get.responses[status];
  expect(response, `${path} documents ${status}`).toBeDefined();
  const schema = response.content['application/json'].schema;
  const resolved = schema.$ref ? doc.components.schemas[schema.$ref.split('/').at(-1)] : schema;
  return new Ajv2020({ strict: false }).compile(resolved);
}

const cases: [docPath: string, url: string, status: number, headers?: Record<string, string>][] = [
  ['/v1/prices', '/v1/prices', 200],
  ['/v1/prices', '/v1/prices?ids=bitcoin,ethereum,nope', 200],
  ['/v1/prices', '/v1/prices?ids=Not_A_Slug', 400],
  ['/v1/prices', '/v1/prices', 401, {}],
  ['/v1/coins/{id}/ohlc', '/v1/coins/bitcoin/ohlc?interval=1m', 200],
  ['/v1/coins/{id}/ohlc', '/v1/coins/bitcoin/ohlc', 200],
  ['/v1/coins/{id}/ohlc', '/v1/coins/bitcoin/ohlc?vs=xau', 400],
  ['/v1/coins/{id}/ohlc', '/v1/coins/bitcoin/ohlc?vs=eur', 503],
  ['/v1/coins/{id}/ohlc', '/v1/coins/bitcoin/ohlc?vs=btc', 200],
  ['/v1/coins/{id}/ohlc', '/v1/coins/bitcoin/ohlc?interval=2h', 400],
  ['/v1/coins/{id}/ohlc', '/v1/coins/no-such-coin/ohlc', 404],
  ['/v1/coins/{id}/ohlc', '/v1/coins/bitcoin/ohlc', 401, { 'x-api-key': 'mds_wrong' }],
  ['/v1/coins/{id}/markets', '/v1/coins/bitcoin/markets', 200],
  ['/v1/coins/{id}/markets', '/v1/coins/bitcoin/markets?vs=jpy', 503],
  ['/v1/coins/{id}/markets', '/v1/coins/bitcoin/markets?vs=btc', 200],
  ['/v1/coins/{id}/markets', '/v1/coins/nothing-here/markets', 404],
  ['/v1/exchanges', '/v1/exchanges?limit=5', 200],
  ['/v1/exchanges', '/v1/exchanges?limit=500', 400],
  ['/v1/exchanges/{id}', '/v1/exchanges/binance', 200],
  ['/v1/exchanges/{id}', '/v1/exchanges/nope', 404],
  ['/v1/search', '/v1/search?q=bit', 200],
  ['/v1/search', '/v1/search', 400],
  ['/v1/coins', '/v1/coins', 200],
  ['/v1/coins', '/v1/coins?sparkline=true&ids=bitcoin,nope', 200],
  ['/v1/coins', '/v1/coins?limit=0', 400],
  ['/v1/coins/{id}', '/v1/coins/bitcoin', 503],
  ['/v1/coins/{id}', '/v1/coins/no-such-coin', 404],
  ['/v1/coins/{id}/chart', '/v1/coins/bitcoin/chart?range=1h', 200],
  ['/v1/coins/{id}/chart', '/v1/coins/bitcoin/chart?range=max&metric=market_cap', 200],
  ['/v1/coins/{id}/chart', '/v1/coins/bitcoin/chart?range=2d', 400],
  ['/v1/coins/{id}/chart', '/v1/coins/no-such-coin/chart', 404],
  ['/v1/global', '/v1/global', 200],
  ['/v1/categories', '/v1/categories', 200],
  ['/v1/categories', '/v1/categories?all=true&ids=layer-1,meme', 200],
  ['/v1/categories', '/v1/categories?all=maybe', 400],
  ['/v1/market-status', '/v1/market-status', 200],
  ['/v1/fear-greed/history', '/v1/fear-greed/history', 200],
  ['/v1/liquidations', '/v1/liquidations?range=7d', 200],
  ['/v1/liquidations', '/v1/liquidations?range=2h', 400],
  ['/v1/liquidations', '/v1/liquidations?venue=nope', 400],
  ['/v1/new-coins', '/v1/new-coins?limit=5', 200],
  ['/v1/new-coins', '/v1/new-coins?limit=0', 400],
  ['/v1/chains', '/v1/chains', 200],
  // Nothing loaded in this store: the documented 503 (api/__tests__/etfFlows.test.ts validates loaded ones).
  ['/v1/etf-flows', '/v1/etf-flows', 503],
  ['/v1/etf-flows/{asset}', '/v1/etf-flows/btc', 503],
  ['/v1/etf-flows/{asset}', '/v1/etf-flows/doge', 404],
];

test.each(cases)('%s: GET %s -> %i matches the document', async (docPath, url, status, headers) => {
  const res = await get(api.url + url, headers ?? { 'x-api-key': key });
  expect(res.status).toBe(status);
  const validate = validator(docPath, status);
  expect(validate(res.json), JSON.stringify(validate.errors)).toBe(true);
  if (status === 200) {
    for (const header of Object.keys(doc.paths[docPath].get.responses[200].headers)) expect(res.headers.get(header), header).not.toBeNull();
  }
});

test('the document describes parameters with their allowed values and defaults', () => {
  const params = doc.paths['/v1/coins/{id}/ohlc'].get.parameters;
  expect(params.find((p: any) => p.name === 'id')).toMatchObject({ in: 'path', required: true });
  expect(params.find((p: any) => p.name === 'interval')).toMatchObject({
    in: 'query',
    required: false,
    schema: { enum: ['1m', '5m', '15m', '1h', '4h', '1d', '1w'], default: '1h' },
  });
  expect(doc.openapi).toBe('3.1.0');
  expect(Object.keys(doc.components.securitySchemes)).toEqual(['apiKey', 'bearer']);
});

test('the reference page is served locally and needs no key', async () => {
  const res = await fetch(`${api.url}/docs`);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/text\/html/);
  const html = await res.text();
  expect(html).toContain('/v1/openapi.json');
  // Nothing loaded from another origin: the page works with no internet.
  expect(html).not.toMatch(/(src|href)="https?:/);
});

test('compression and CORS', async () => {
  // Bodies over 1 kB are compressed (40 traded candles, then the gapless tail up to now).
  const url = `${api.url}/v1/coins/bitcoin/ohlc?interval=1m`;
  const plain = await fetch(url, { headers: { 'x-api-key': key, 'accept-encoding': 'identity' } });
  expect(plain.headers.get('content-encoding')).toBeNull();
  const plainBody = await plain.text();
  const etags = new Set([plain.headers.get('etag')]);
  for (const encoding of ['gzip', 'br']) {
    const res = await fetch(url, { headers: { 'x-api-key': key, 'accept-encoding': encoding } });
    expect(res.headers.get('content-encoding')).toBe(encoding);
    expect(res.headers.get('vary')).toMatch(/accept-encoding/i);
    // fetch decompresses: the same JSON as the uncompressed body.
    expect(await res.text()).toBe(plainBody);
    expect(((JSON.parse(plainBody)) as { candles: unknown[] }).candles.length).toBeGreaterThanOrEqual(40);
    // Each representation has its own validator, and a conditional GET with it answers 304
    // (cache-control set: fetch adds no-cache to a conditional request otherwise, which forbids a 304).
    const etag = res.headers.get('etag')!;
    etags.add(etag);
    const again = await fetch(url, { headers: { 'x-api-key': key, 'accept-encoding': encoding, 'if-none-match': etag, 'cache-control': 'max-age=0' } });
    expect(again.status).toBe(304);
  }
  expect(etags.size).toBe(3);
  const res = await get(`${api.url}/v1/prices`, { 'x-api-key': key, origin: 'https://example.org' });
  expect(res.headers.get('access-control-allow-origin')).toBe('*');
  expect(res.headers.get('access-control-expose-headers')).toContain('x-ratelimit-remaining');
  const preflight = await get(`${api.url}/v1/prices`, { origin: 'https://example.org', 'access-control-request-method': 'GET', 'access-control-request-headers': 'x-api-key' }, 'OPTIONS');
  expect(preflight.status).toBe(204);
  expect(preflight.headers.get('access-control-allow-headers')).toContain('x-api-key');
});
