// No input can produce a 500: random paths, parameters and headers against every endpoint.
import fc from 'fast-check';
import { expect, test } from 'vitest';
import { etfFlowsDemoDir, importEtfFlowsDir } from '../../aggregate/jobs/etfFlows.ts';
import { useTestApi } from '../../test/support/apiHarness.ts';
import { computeIndex, silentLog, trade } from '../../test/support/harness.ts';


const api = useTestApi({
  keyName: 'fuzz',
  env: { QUOTA_PER_HOUR: '1000000' },
  seed: async (store) => {
    const now = Date.now();
    await store.insert('trades', [trade({ venue: 'binance', market: 'ETHUSDT', asset: 'ethereum', quote: 'USDT', trade_id: '1', ts: now - 1_000, price: 3_000, quantity: 1 })]);
    // Rates for the vs values the fuzzer sends (eur, btc), so that they answer 200 rather than 503 unavailable.
    await store.insert('trades', [trade({ venue: 'binance', market: 'BTCUSDT', asset: 'bitcoin', quote: 'USDT', trade_id: '2', ts: now - 1_000, price: 90_000, quantity: 1 })]);
    // ars, brl and sek: the value maps of /v1/coins/{id}, which answers 503 without them.
    await store.insert(
      'fx_reference_rates',
      ['eur', 'ars', 'brl', 'sek'].map((currency) => ({ date: '2000-01-03', currency, per_usd: 0.99, source: 'fuzz', imported_at: now })),
    );
    // ETF flows (the demo's simulated files), which answer 503 until loaded.
    await importEtfFlowsDir(store, etfFlowsDemoDir, { log: silentLog });
    // Their index prices, up to the second of those trades.
    await computeIndex(store, now + 3_000);
  },
});

const segment = fc.oneof(
  fc.constantFrom('bitcoin', 'ethereum', 'no-such-coin', '', '..', '%', '%zz', '%00', 'BITCOIN', 'a'.repeat(300)),
  fc.string({ maxLength: 12 }).map(encodeURIComponent),
);
const path = fc.oneof(
  fc.constant('/v1/prices'),
  segment.map((id) => `/v1/coins/${id}/ohlc`),
  segment.map((id) => `/v1/coins/${id}/markets`),
  fc.constant('/v1/exchanges'),
  fc.constant('/v1/search'),
  segment.map((id) => `/v1/exchanges/${id}`),
  fc.constant('/v1/coins'),
  segment.map((id) => `/v1/coins/${id}`),
  segment.map((id) => `/v1/coins/${id}/chart`),
  fc.constant('/v1/global'),
  fc.constant('/v1/categories'),
  fc.constant('/v1/market-status'),
  fc.constant('/v1/fear-greed/history'),
  fc.constant('/v1/liquidations'),
  fc.constant('/v1/new-coins'),
  fc.constant('/v1/chains'),
  fc.constant('/v1/etf-flows'),
  segment.map((asset) => `/v1/etf-flows/${asset}`),
  fc.array(segment, { maxLength: 4 }).map((parts) => `/v1/${parts.join('/')}`),
  fc.array(segment, { maxLength: 3 }).map((parts) => `/${parts.join('/')}`),
);
const value = fc.oneof(
  fc.constantFrom('1m', '1h', '1w', 'usd', 'eur', 'btc', 'bitcoin,ethereum', ',', '', '-1', '1e309', 'true', '[]'),
  fc.string({ maxLength: 20 }),
);
const query = fc.dictionary(fc.constantFrom('ids', 'interval', 'vs', 'limit', 'page', 'offset', 'q', 'x', 'ids[]', '__proto__', 'constructor', 'range', 'metric', 'sparkline', 'all', 'venue'), value, { maxKeys: 4 });
const headers = fc.record(
  {
    auth: fc.constantFrom('x-api-key', 'bearer', 'none', 'wrong', 'empty-bearer'),
    requestId: fc.option(fc.string({ maxLength: 200 }).filter((s) => /^[\x20-\x7e]*$/.test(s))),
    method: fc.constantFrom('GET', 'GET', 'GET', 'HEAD', 'POST', 'DELETE', 'OPTIONS'),
  },
  { requiredKeys: ['auth', 'method'] },
);

test('every request gets a non-500 answer with the error body on failure', async () => {
  await fc.assert(
    fc.asyncProperty(path, query, headers, async (p, q, h) => {
      const search = new URLSearchParams();
      for (const [k, v] of Object.entries(q)) search.append(k, v);
      const sendHeaders: Record<string, string> = {};
      if (h.auth === 'x-api-key') sendHeaders['x-api-key'] = api.key;
      if (h.auth === 'bearer') sendHeaders.authorization = `Bearer ${api.key}`;
      if (h.auth === 'wrong') sendHeaders['x-api-key'] = 'mds_not_a_key';
      if (h.auth === 'empty-bearer') sendHeaders.authorization = 'Bearer ';
      if (h.requestId) sendHeaders['x-request-id'] = h.requestId;
      const res = await fetch(`${api.url}${p}?${search}`, { method: h.method, headers: sendHeaders });
      const text = await res.text();
      expect(res.status, `${h.method} ${p}?${search} -> ${res.status} ${text}`).toBeLessThan(500);
      expect(res.headers.get('x-request-id')).toBeTruthy();
      if (res.status >= 400 && h.method !== 'HEAD') {
        const body = JSON.parse(text);
        expect(Object.keys(body)).toEqual(['error']);
        expect(body.error).toEqual({ code: expect.any(String), message: expect.any(String), status: res.status });
      }
    }),
    { numRuns: 400 },
  );
}, 120_000);
