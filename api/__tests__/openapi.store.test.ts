// The OpenAPI document is generated from the route schemas; real responses must validate against it.
import { readdirSync, readFileSync } from 'node:fs';
import { beforeAll, expect, test } from 'vitest';
import { errorCodes } from '../errors.ts';
import { useTestApi } from '../../test/support/apiHarness.ts';
import { computeIndex, get, trade } from '../../test/support/harness.ts';
import { openApiValidators, resolveRef, type OpenApiDocument } from '../../test/support/openapi.ts';

let doc: OpenApiDocument;
let validators: ReturnType<typeof openApiValidators>;

const api = useTestApi({
  keyName: 'openapi-test',
  seed: async (store) => {
    const now = Date.now();
    await store.insert(
      'trades',
      Array.from({ length: 40 }, (_, i) =>
        trade({ venue: 'binance', market: 'BTCUSDT', asset: 'bitcoin', quote: 'USDT', trade_id: String(i), ts: now - 3_000_000 + i * 60_000, price: 90_000 + i, quantity: 0.1 }),
      ),
    );
    // Their index price (the btc rate of vs=btc).
    await computeIndex(store, now);
    // A fresh book measurement, so the markets and exchanges responses carry scores, not only nulls.
    await store.insert('market_quality', [
      { asset: 'bitcoin', venue: 'binance', market: 'BTCUSDT', quote: 'USDT', ts: now, spread_bps: 0.1, depth_bid_2: 5e6, depth_ask_2: 4e6, depth_bid_1: 3e6, depth_ask_1: 2e6, cost_buy: { '10000': 0.2, '1000000': null }, cost_sell: { '10000': 0.3, '1000000': null }, liquidity_score: 870 },
    ]);
  },
});
beforeAll(async () => {
  doc = (await api.getWithoutKey('/v1/openapi.json')).json as OpenApiDocument;
  validators = openApiValidators(doc);
});

/** The headers the document says a response always carries. */
function requiredHeaders(path: string, status: number): string[] {
  const response = resolveRef(doc, doc.paths[path]!.get!.responses[status]);
  return Object.entries<any>(response.headers ?? {})
    .filter(([, header]) => resolveRef(doc, header).required)
    .map(([name]) => name);
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
  // Nothing loaded in this store: the documented 503 (api/__tests__/etfFlows.store.test.ts validates loaded ones).
  ['/v1/etf-flows', '/v1/etf-flows', 503],
  ['/v1/etf-flows/{asset}', '/v1/etf-flows/btc', 503],
  ['/v1/etf-flows/{asset}', '/v1/etf-flows/doge', 404],
];

test.each(cases)('%s: GET %s -> %i matches the document', async (docPath, url, status, headers) => {
  const res = await (headers ? api.getWithoutKey(url, headers) : api.get(url));
  expect(res.status).toBe(status);
  expect(doc.paths[docPath]!.get!.responses[status], `${docPath} documents ${status}`).toBeDefined();
  const validate = validators.response(docPath, status);
  expect(validate(res.json), JSON.stringify(validate.errors)).toBe(true);
  for (const header of requiredHeaders(docPath, status)) expect(res.headers.get(header), header).not.toBeNull();
});

test('the document describes parameters with their allowed values and defaults', () => {
  const params = doc.paths['/v1/coins/{id}/ohlc']!.get!.parameters;
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
  const script = await fetch(`${api.url}/docs/assets/scalar.js`);
  expect(script.status).toBe(200);
  expect(script.headers.get('content-type')).toMatch(/javascript/);
  expect(await script.text()).toContain('createApiReference');
});

test('responses, and the parts of them clients handle alone, are named schemas', () => {
  const { schemas } = doc.components;
  const named = (name: string) => ({ $ref: `#/components/schemas/${name}` });
  expect(doc.paths['/v1/prices']!.get!.responses[200].content['application/json'].schema).toEqual(named('PricesResponse'));
  expect(schemas.PricesResponse.properties.prices.items).toEqual(named('PriceEntry'));
  expect(schemas.CoinsResponse.properties.coins.items).toEqual(named('Coin'));
  expect(schemas.CoinOhlcResponse.properties.candles.items).toEqual(named('Candle'));
  expect(schemas.CoinMarketsResponse.properties.markets.items).toEqual(named('Market'));
  expect(schemas.ExchangesResponse.properties.exchanges.items).toEqual(named('Exchange'));
  expect(resolveRef(doc, doc.paths['/v1/prices']!.get!.responses[400]).content['application/json'].schema).toEqual(named('Error'));
  // Every 200 body is a named schema, and every $ref of the document leads somewhere.
  for (const { path, operation } of operations()) {
    const ok = operation.responses[200] ?? operation.responses[101];
    if (ok.content) expect(ok.content['application/json'].schema.$ref, path).toMatch(/^#\/components\/schemas\/\w+$/);
  }
  for (const [, target] of JSON.stringify(doc).matchAll(/"\$ref":"([^"]+)"/g)) expect(resolveRef(doc, { $ref: target! }), target).toBeDefined();
});

const examplesDir = new URL('../openapi-examples/', import.meta.url);

/** Every operation of the document (GET routes, and the stream's POST /v1/stream/token). */
function operations(): { path: string; method: string; operation: any }[] {
  return Object.entries(doc.paths).flatMap(([path, item]) => Object.entries<any>(item).map(([method, operation]) => ({ path, method, operation })));
}

test('every response has an example captured from the demo, and it validates against its own schema', () => {
  let examples = 0;
  for (const { path, method, operation } of operations()) {
    for (const [status, documented] of Object.entries<any>(operation.responses)) {
      const response = resolveRef(doc, documented);
      if (status === '304' || status === '101') {
        expect(response.content, `${status} has no body`).toBeUndefined();
        continue;
      }
      const media = response.content['application/json'];
      const example = media.examples?.demo?.value;
      expect(example, `${method} ${path} ${status} has an example`).toBeDefined();
      const validate = validators.compile(media.schema);
      expect(validate(example), `${method} ${path} ${status}: ${JSON.stringify(validate.errors)}`).toBe(true);
      if (status !== '200') expect(example.error.status, `${method} ${path} ${status}`).toBe(Number(status));
      examples += 1;
    }
  }
  expect(examples).toBeGreaterThan(Object.keys(doc.paths).length * 4);
  // Each fixture is some operation's example (or the errors'): none is left behind by a renamed route.
  const operationIds = new Set(operations().map(({ operation }) => operation.operationId));
  for (const file of readdirSync(examplesDir).filter((f) => f.endsWith('.json'))) {
    expect(operationIds.has(file.slice(0, -'.json'.length)) || file === 'errors.json', file).toBe(true);
  }
});

test('error.code is an enum of exactly the codes the API sends', () => {
  const apiDir = new URL('../', import.meta.url);
  const sources = readdirSync(apiDir, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts') && !f.includes('__tests__'));
  const sent = new Set<string>();
  for (const file of sources) {
    for (const [, code] of readFileSync(new URL(file, apiDir), 'utf8').matchAll(/new ApiError\(\s*\d{3},\s*'(\w+)'/g)) sent.add(code!);
  }
  expect(sent.size).toBeGreaterThanOrEqual(8);
  const documented = doc.components.schemas.Error.properties.error.properties.code.enum as string[];
  expect([...documented].sort()).toEqual([...sent].sort());
  expect([...errorCodes].sort()).toEqual([...sent].sort());
});

test('every status an endpoint may answer carries the headers the document says it always has', async () => {
  const url = `${api.url}/v1/prices`;
  const auth = { 'x-api-key': api.key };
  const fresh = await fetch(url, { headers: auth });
  // cache-control: fetch adds no-cache to a conditional request otherwise, which forbids a 304.
  const answers: [number, Response][] = [
    [304, await fetch(url, { headers: { ...auth, 'if-none-match': fresh.headers.get('etag')!, 'cache-control': 'max-age=0' } })],
    [405, await fetch(url, { method: 'POST', headers: auth })],
    [401, await fetch(url)],
    [400, await fetch(`${url}?ids=Not_A_Slug`, { headers: auth })],
    [404, await fetch(`${api.url}/v1/coins/no-such-coin/ohlc`, { headers: auth })],
  ];
  const limited = await api.serve({ env: { QUOTA_PER_HOUR: '1' } });
  try {
    expect((await fetch(`${limited.url}/v1/prices`, { headers: auth })).status).toBe(200);
    answers.push([429, await fetch(`${limited.url}/v1/prices`, { headers: auth })]);
  } finally {
    await limited.close();
  }
  for (const [status, res] of answers) {
    expect(res.status).toBe(status);
    const path = status === 404 ? '/v1/coins/{id}/ohlc' : '/v1/prices';
    const headers = requiredHeaders(path, status);
    expect(headers.length, `${status} documents headers`).toBeGreaterThan(0);
    for (const header of headers) expect(res.headers.get(header), `${status} ${header}`).not.toBeNull();
    if (status === 304) continue;
    const validate = validators.response(path, status);
    expect(validate(await res.json()), `${status}: ${JSON.stringify(validate.errors)}`).toBe(true);
  }
  expect(requiredHeaders('/v1/prices', 405)).toContain('Allow');
  expect(requiredHeaders('/v1/prices', 429)).toContain('Retry-After');
});

test('servers, license and the attribution the spec requires', async () => {
  // Relative without PUBLIC_BASE_URL: the origin the document was read from.
  expect(doc.servers).toEqual([{ url: '/', description: 'this server' }]);
  const behindProxy = await api.serve({ env: { PUBLIC_BASE_URL: 'https://md.example.org/' } });
  try {
    expect(((await get(`${behindProxy.url}/v1/openapi.json`)).json as OpenApiDocument).servers).toEqual([{ url: 'https://md.example.org' }]);
  } finally {
    await behindProxy.close();
  }
  expect(doc.info.license.name).toMatch(/attribution/);
  expect(doc.info.description).toMatch(/Attribution.*data provider is a condition of use/);
});

test('compression and CORS', async () => {
  // Bodies over 1 kB are compressed (40 traded candles, then the gapless tail up to now).
  const url = `${api.url}/v1/coins/bitcoin/ohlc?interval=1m`;
  const plain = await fetch(url, { headers: { 'x-api-key': api.key, 'accept-encoding': 'identity' } });
  expect(plain.headers.get('content-encoding')).toBeNull();
  const plainBody = await plain.text();
  const etags = new Set([plain.headers.get('etag')]);
  for (const encoding of ['gzip', 'br']) {
    const res = await fetch(url, { headers: { 'x-api-key': api.key, 'accept-encoding': encoding } });
    expect(res.headers.get('content-encoding')).toBe(encoding);
    expect(res.headers.get('vary')).toMatch(/accept-encoding/i);
    // fetch decompresses: the same JSON as the uncompressed body.
    expect(await res.text()).toBe(plainBody);
    expect(((JSON.parse(plainBody)) as { candles: unknown[] }).candles.length).toBeGreaterThanOrEqual(40);
    // Each representation has its own validator, and a conditional GET with it answers 304
    // (cache-control set: fetch adds no-cache to a conditional request otherwise, which forbids a 304).
    const etag = res.headers.get('etag')!;
    etags.add(etag);
    const again = await fetch(url, { headers: { 'x-api-key': api.key, 'accept-encoding': encoding, 'if-none-match': etag, 'cache-control': 'max-age=0' } });
    expect(again.status).toBe(304);
  }
  expect(etags.size).toBe(3);
  const res = await api.get('/v1/prices', { origin: 'https://example.org' });
  expect(res.headers.get('access-control-allow-origin')).toBe('*');
  expect(res.headers.get('access-control-expose-headers')).toContain('x-ratelimit-remaining');
  const preflight = await api.getWithoutKey('/v1/prices', { origin: 'https://example.org', 'access-control-request-method': 'GET', 'access-control-request-headers': 'x-api-key' }, 'OPTIONS');
  expect(preflight.status).toBe(204);
  expect(preflight.headers.get('access-control-allow-headers')).toContain('x-api-key');
});
