// Captures the examples of the OpenAPI document from a running demo (`npm run demo`):
//   node api/openapi-examples/capture.ts http://127.0.0.1:8080 <demo key>
// Rerun it when a response shape changes (api/__tests__/openapi.store.test.ts says which example no longer fits).
import { writeFileSync } from 'node:fs';
import { storeUnavailable } from '../unavailable.ts';

/** The request whose answer becomes each operation's 200 example. */
const requests: Record<string, string> = {
  prices: '/v1/prices?ids=bitcoin,ethereum,solana',
  coins: '/v1/coins?limit=3&sparkline=true',
  coin: '/v1/coins/bitcoin',
  coinOhlc: '/v1/coins/bitcoin/ohlc?interval=1h',
  coinChart: '/v1/coins/bitcoin/chart?range=24h',
  coinMarkets: '/v1/coins/bitcoin/markets',
  exchanges: '/v1/exchanges?limit=3',
  exchange: '/v1/exchanges/binance',
  global: '/v1/global',
  chains: '/v1/chains',
  categories: '/v1/categories',
  newCoins: '/v1/new-coins?limit=3',
  search: '/v1/search?q=bit',
  etfFlows: '/v1/etf-flows',
  etfAssetFlows: '/v1/etf-flows/btc',
  marketStatus: '/v1/market-status',
  fearGreedHistory: '/v1/fear-greed/history',
  liquidations: '/v1/liquidations?range=24h',
};

/** Requests that get each error status; 429 and 503 are handled apart below. */
const errorRequests: Record<number, { path: string; method?: string; key?: boolean }> = {
  400: { path: '/v1/coins/bitcoin/ohlc?interval=2h' },
  401: { path: '/v1/prices', key: false },
  404: { path: '/v1/coins/no-such-coin' },
  405: { path: '/v1/prices', method: 'POST' },
};

/** Examples stay readable: every array keeps its first `keep` items (grid rows stay as wide as the funds kept). */
const keep = 3;
function shorten(value: unknown): unknown {
  if (Array.isArray(value)) return value.slice(0, keep).map(shorten);
  if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, shorten(v)]));
  return value;
}

const [base, key] = process.argv.slice(2);
if (!base || !key) throw new Error('usage: node api/openapi-examples/capture.ts <base URL> <API key>');
const dir = new URL('./', import.meta.url);
const write = (name: string, body: unknown) => writeFileSync(new URL(name, dir), `${JSON.stringify(body, null, 2)}\n`);

for (const [operationId, path] of Object.entries(requests)) {
  const res = await fetch(base + path, { headers: { 'x-api-key': key } });
  if (res.status !== 200) throw new Error(`${path}: ${res.status} ${await res.text()}`);
  write(`${operationId}.json`, shorten(await res.json()));
}

const errors: Record<number, unknown> = {};
for (const [status, { path, method, key: withKey }] of Object.entries(errorRequests)) {
  const res = await fetch(base + path, { method, headers: withKey === false ? {} : { 'x-api-key': key } });
  if (res.status !== Number(status)) throw new Error(`${method ?? 'GET'} ${path}: ${res.status}, expected ${status}`);
  errors[Number(status)] = await res.json();
}
// The quota: spend what is left of the key's hour (the demo's key; mind that it is used up after this).
for (;;) {
  const res = await fetch(`${base}/v1/prices`, { headers: { 'x-api-key': key } });
  const body: unknown = await res.json();
  if (res.status === 429) {
    errors[429] = body;
    break;
  }
}
// A store outage cannot be asked for: the body the API sends then.
errors[503] = storeUnavailable().body();
write('errors.json', errors);
