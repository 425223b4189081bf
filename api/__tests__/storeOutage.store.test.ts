// The store failing, slow or hung must never take the API down: a real chDB store behind the fault wrapper.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { withStoreFaults, type StoreFaults } from '../../infra/storeFaults.ts';
import { KeyStore } from '../keys.ts';
import type { ApiServer } from '../server.ts';
import { useTestApi, type ServeOptions } from '../../test/support/apiHarness.ts';
import { computeIndex, get, trade } from '../../test/support/harness.ts';
import { until, untilValue } from '../../test/support/until.ts';

type ErrorBody = { error: { code: string; message: string; status: number } };

// The store and the key; each test starts its APIs on the store behind a fault wrapper.
const testApi = useTestApi({
  keyName: 'outage-test',
  listen: false,
  seed: async (store) => {
    const now = Date.now();
    await store.insert('trades', [trade({ venue: 'binance', market: 'BTCUSDT', asset: 'bitcoin', quote: 'USDT', trade_id: '1', ts: now - 1_000, price: 90_000, quantity: 1 })]);
    await computeIndex(store, now + 3_000);
  },
});
afterEach(() => vi.useRealTimers());

/** An API on the real store behind a fault wrapper; the keys load before this returns (the store is fine by default). */
async function startFaulty(options: ServeOptions = {}, timeouts = { queryTimeoutMs: 2_000, insertTimeoutMs: 2_000 }): Promise<{ api: ApiServer; faults: StoreFaults }> {
  const faults = withStoreFaults(testApi.store, timeouts);
  const api = await testApi.serve({ store: faults.store, env: { QUOTA_PER_HOUR: '1000000' }, ...options });
  return { api, faults };
}

const withKey = (k = testApi.key) => ({ 'x-api-key': k });

/** One request per route of api/app.ts, with parameters that reach the store; search reads only the catalog. */
const routeRequests: Record<string, string> = {
  '/v1/prices': '/v1/prices?ids=bitcoin',
  '/v1/coins/{id}/ohlc': '/v1/coins/bitcoin/ohlc?interval=1h',
  '/v1/coins/{id}/markets': '/v1/coins/bitcoin/markets',
  '/v1/exchanges': '/v1/exchanges',
  '/v1/exchanges/{id}': '/v1/exchanges/binance',
  '/v1/search': '/v1/search?q=bit',
  '/v1/liquidations': '/v1/liquidations',
  '/v1/new-coins': '/v1/new-coins',
  '/v1/etf-flows': '/v1/etf-flows',
  '/v1/etf-flows/{asset}': '/v1/etf-flows/btc',
  '/v1/chains': '/v1/chains',
  '/v1/market-status': '/v1/market-status',
  '/v1/fear-greed/history': '/v1/fear-greed/history',
  '/v1/coins': '/v1/coins',
  '/v1/coins/{id}': '/v1/coins/bitcoin',
  '/v1/coins/{id}/chart': '/v1/coins/bitcoin/chart',
  '/v1/global': '/v1/global',
  '/v1/categories': '/v1/categories',
};
const storeFree = new Set(['/v1/search']);

describe('a failing store, cold cache', () => {
  it('answers 503 unavailable with Retry-After on every store-backed route, never a 500', async () => {
    const { api, faults } = await startFaulty();
    // The test covers every route the API documents.
    const doc = (await get(`${api.url}/v1/openapi.json`)).json as { paths: Record<string, { get?: { tags: string[] }; post?: unknown }> };
    // The stream's two paths (a WebSocket, and a token made from the keys in memory) are stream.store.test.ts's.
    const dataRoutes = Object.entries(doc.paths).filter(([, item]) => !item.get?.tags.includes('Stream') && !item.post);
    expect(dataRoutes.map(([path]) => path).sort()).toEqual(Object.keys(routeRequests).sort());

    faults.set('failquery');
    for (const [route, path] of Object.entries(routeRequests)) {
      const res = await get(`${api.url}${path}`, withKey());
      if (storeFree.has(route)) {
        expect(res.status, path).toBe(200);
        continue;
      }
      expect(res.status, `${path}: ${res.text}`).toBe(503);
      expect((res.json as ErrorBody).error, path).toMatchObject({ code: 'unavailable', status: 503 });
      expect(res.headers.get('retry-after'), path).toBe('5');
    }
  });
});

describe('a failing store, warm cache', () => {
  it('serves an entry built before the fault, marked stale, for 15 minutes past its expiry; 503 for what was never built', async () => {
    // Keys stay usable for the whole (fake) hour this test spans.
    const { api, faults } = await startFaulty({ keyStore: { maxStaleMs: 3_600_000 } });
    const before = await get(`${api.url}/v1/prices?ids=bitcoin`, withKey());
    expect(before.status).toBe(200);
    expect(before.headers.get('x-data-stale')).toBeNull();

    faults.set('fail');
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + 5 * 60_000 });
    const stale = await get(`${api.url}/v1/prices?ids=bitcoin`, withKey());
    expect(stale.status).toBe(200);
    expect(stale.text).toBe(before.text);
    expect(Number(stale.headers.get('x-data-stale'))).toBeGreaterThanOrEqual(300);
    expect(stale.headers.get('age')).toBe(stale.headers.get('x-data-stale'));
    expect(stale.headers.get('cache-control')).toBe('private, no-cache');
    // Browsers may read it.
    expect(stale.headers.get('access-control-expose-headers')).toContain('x-data-stale');

    const never = await get(`${api.url}/v1/prices?ids=ethereum`, withKey());
    expect(never.status).toBe(503);
    expect((never.json as ErrorBody).error.code).toBe('unavailable');

    // Past the bound (15 min after the 5 s entry expired): no longer served.
    vi.setSystemTime(Date.now() + 11 * 60_000);
    const tooOld = await get(`${api.url}/v1/prices?ids=bitcoin`, withKey());
    expect(tooOld.status).toBe(503);

    // The store is back: after the 1 s wait that follows a failure, the key is rebuilt, fresh.
    faults.set('ok');
    vi.setSystemTime(Date.now() + 2_000);
    const back = await get(`${api.url}/v1/prices?ids=bitcoin`, withKey());
    expect(back.status).toBe(200);
    expect(back.headers.get('x-data-stale')).toBeNull();
  });

  it('sends one failing rebuild to the store, not one per request', async () => {
    const { api, faults } = await startFaulty({ keyStore: { refreshMs: 60_000 } });
    faults.set('failquery');
    const queriesOf = async (requests: number, path: string) => {
      const before = faults.calls().queries;
      const answers = await Promise.all(Array.from({ length: requests }, () => get(`${api.url}${path}`, withKey())));
      expect(answers.map((a) => a.status)).toEqual(Array(requests).fill(503));
      return faults.calls().queries - before;
    };
    // What one build of this route asks the store (its queries run side by side, so the first failure does not stop the others).
    const oneBuild = await queriesOf(1, '/v1/exchanges?limit=3');
    expect(oneBuild).toBeGreaterThan(0);
    // Twenty requests at once on another key: one build.
    expect(await queriesOf(20, '/v1/exchanges?limit=4')).toBe(oneBuild);
    // Within a second of its failure, the key is refused without asking the store.
    expect(await queriesOf(20, '/v1/exchanges?limit=4')).toBe(0);
  });
});

describe('API keys while the store fails', () => {
  it('accepts a valid key and refuses an unknown one from memory, without any store call', async () => {
    // No background reload during the test, so every store call would be the requests' own.
    const { api, faults } = await startFaulty({ keyStore: { refreshMs: 60_000 } });
    expect((await get(`${api.url}/v1/search?q=bit`, withKey())).status).toBe(200);
    faults.set('fail');
    const before = faults.calls();
    expect((await get(`${api.url}/v1/search?q=bit`, withKey())).status).toBe(200);
    for (let i = 0; i < 20; i++) {
      const res = await get(`${api.url}/v1/search?q=bit`, withKey(`mds_unknown${String(i).padStart(25, '0')}`));
      expect(res.status).toBe(401);
      expect((res.json as ErrorBody).error.code).toBe('invalid_key');
    }
    expect(faults.calls()).toEqual(before);
  });

  it('refuses a key revoked by another process within the refresh interval', async () => {
    const refreshMs = 300;
    const other = new KeyStore(testApi.store);
    const { key: revoked, prefix } = await other.create('to-revoke');
    const { api } = await startFaulty({ keyStore: { refreshMs } });
    expect((await get(`${api.url}/v1/search?q=bit`, withKey(revoked))).status).toBe(200);
    await other.revoke(prefix);
    const revokedAt = performance.now();
    let status = 200;
    await until(async () => (status = (await get(`${api.url}/v1/search?q=bit`, withKey(revoked))).status) !== 200, 'the revoked key to be refused', {
      timeoutMs: 10 * refreshMs,
      everyMs: 20,
    });
    expect(status).toBe(401);
    // One interval, plus the reload's own query and the polling step.
    expect(performance.now() - revokedAt).toBeLessThan(refreshMs + 500);
  });

  it('starts with the store down, answers 503 until the keys load, then serves', async () => {
    const faults = withStoreFaults(testApi.store, { queryTimeoutMs: 2_000, insertTimeoutMs: 2_000 });
    faults.set('fail');
    const api = await testApi.serve({ store: faults.store, keyStore: { refreshMs: 100 } });
    const down = await get(`${api.url}/v1/search?q=bit`, withKey());
    expect(down.status).toBe(503);
    expect((down.json as ErrorBody).error).toMatchObject({ code: 'unavailable', message: expect.stringContaining('API keys') });
    faults.set('ok');
    const served = await untilValue(
      async () => {
        const res = await get(`${api.url}/v1/search?q=bit`, withKey());
        return res.status === 200 ? res : undefined;
      },
      'a 200 once the keys load',
      { timeoutMs: 2_000, everyMs: 50 },
    );
    // The answer itself, not only its status: bitcoin matches "bit".
    expect((served.json as { coins: { id: string }[] }).coins.map((c) => c.id)).toContain('bitcoin');
  });

  it('keeps the last loaded keys for maxStaleMs of failing reloads, then answers 503', async () => {
    const refreshMs = 100;
    const maxStaleMs = 600;
    const { api, faults } = await startFaulty({ keyStore: { refreshMs, maxStaleMs } });
    const failedAt = performance.now();
    faults.set('fail');
    expect((await get(`${api.url}/v1/search?q=bit`, withKey())).status).toBe(200);
    // Several reloads fail, one per interval, well within maxStaleMs: the keys loaded before are still used.
    const queriesBefore = faults.calls().queries;
    await until(() => faults.calls().queries >= queriesBefore + 3, 'three failed reloads of the keys', { everyMs: 10 });
    expect(performance.now() - failedAt).toBeLessThan(maxStaleMs);
    expect((await get(`${api.url}/v1/search?q=bit`, withKey())).status).toBe(200);
    // Once the last good load is older than maxStaleMs: 503, and not before (that load started at most one interval before the fault).
    const expired = await untilValue(
      async () => {
        const res = await get(`${api.url}/v1/search?q=bit`, withKey());
        return res.status === 503 ? res : undefined;
      },
      'a 503 once the keys are older than maxStaleMs',
      { timeoutMs: maxStaleMs + 1_000, everyMs: 20 },
    );
    expect(performance.now() - failedAt).toBeGreaterThanOrEqual(maxStaleMs - 2 * refreshMs);
    expect(expired.headers.get('retry-after')).toBe('5');
  });
});

describe('shutdown', () => {
  it('close() returns within its deadline while a request hangs on the store', async () => {
    const shutdownTimeoutMs = 300;
    const { api, faults } = await startFaulty({ shutdownTimeoutMs }, { queryTimeoutMs: 5_000, insertTimeoutMs: 5_000 });
    faults.set('hang');
    const queriesBefore = faults.calls().queries;
    const hanging = get(`${api.url}/v1/exchanges?limit=7`, withKey()).then(
      (res) => res.status,
      (err: Error) => err.name,
    );
    await until(() => faults.calls().queries > queriesBefore, 'the request to reach the hung store', { everyMs: 10 });
    const started = performance.now();
    await api.close();
    expect(performance.now() - started).toBeLessThan(shutdownTimeoutMs + 400);
    // The client saw its connection cut, not an answer.
    expect(await hanging).toBe('TypeError');
  });
});
