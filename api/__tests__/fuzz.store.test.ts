// No input can produce a 500: random paths, parameters and headers against every endpoint.
import fc from 'fast-check';
import { expect, test } from 'vitest';
import { etfFlowsDemoDir, importEtfFlowsDir } from '../../aggregate/jobs/etfFlows.ts';
import { useTestApi } from '../../test/support/apiHarness.ts';
import { fuzzFetch, fuzzRequest } from '../../test/support/fuzzRequests.ts';
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

test('every request gets a non-500 answer with the error body on failure', async () => {
  await fc.assert(
    fc.asyncProperty(fuzzRequest, async (request) => {
      const { url, init } = fuzzFetch(api.url, api.key, request);
      const res = await fetch(url, init);
      const text = await res.text();
      expect(res.status, `${init.method} ${url} -> ${res.status} ${text}`).toBeLessThan(500);
      expect(res.headers.get('x-request-id')).toBeTruthy();
      if (res.status >= 400 && init.method !== 'HEAD') {
        const body = JSON.parse(text);
        expect(Object.keys(body)).toEqual(['error']);
        expect(body.error).toEqual({ code: expect.any(String), message: expect.any(String), status: res.status });
      }
    }),
    { numRuns: 400 },
  );
}, 120_000);
