// The operator endpoints against a browser on the operator's host (issue #29, finding 2): every
// answer used to carry `Access-Control-Allow-Origin: *`, so any page could read /metrics, /ready
// and /status.json, and a page's domain re-pointed at 127.0.0.1 (DNS rebinding) passed the
// loopback check. Requests go out with rawGet, which sends the Host and Origin a test names.
import { expect, test } from 'vitest';
import { localView, opsRouter } from '../../infra/health.ts';
import { createMetrics } from '../../infra/metrics.ts';
import { rawGet, useTestApi } from '../../test/support/apiHarness.ts';

const api = useTestApi({
  keyName: 'operator-access',
  // The status routes read OPS_ALLOWED_HOSTS from the configuration; the ops router is given the same.
  env: { OPS_ALLOWED_HOSTS: 'mds.internal' },
  ops: { observe: (_req, _res, next) => next(), router: opsRouter({ view: localView(createMetrics(), () => []), access: { hosts: { allowedHosts: ['mds.internal'] } } }) },
});

/** One GET with the given headers (Host among them): status, CORS header and body. */
async function getWith(path: string, headers: Record<string, string>): Promise<{ status: number; cors: string | undefined; body: string }> {
  const res = await rawGet(api.url + path, { 'x-api-key': api.key, ...headers });
  return { status: res.status, cors: res.headers['access-control-allow-origin'], body: res.body.toString('utf8') };
}

const operatorPaths = ['/health', '/ready', '/metrics', '/status.json', '/status/candles.json'];

test('tools reach the operator endpoints by address, localhost or a configured name, and get no CORS header', async () => {
  const port = new URL(api.url).port;
  for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `mds.internal:${port}`])
    for (const path of operatorPaths) {
      const res = await getWith(path, { host });
      expect(res.status, `${host} ${path}: ${res.body}`).toBe(200);
      expect(res.cors, path).toBeUndefined();
    }
});

test('a page of another site, and a rebound domain, are refused there; the API stays open to every origin', async () => {
  const port = new URL(api.url).port;
  for (const path of operatorPaths) {
    const foreign = await getWith(path, { host: `127.0.0.1:${port}`, origin: 'http://evil.example' });
    expect(foreign.status, path).toBe(403);
    expect(JSON.parse(foreign.body).error).toMatchObject({ code: 'forbidden', status: 403 });
    expect(foreign.cors, path).toBeUndefined();
    const rebound = await getWith(path, { host: `evil.example:${port}` });
    expect(rebound.status, path).toBe(403);
  }
  // The status page's own script: same origin.
  expect((await getWith('/status.json', { host: `127.0.0.1:${port}`, origin: `http://127.0.0.1:${port}` })).status).toBe(200);
  const keyed = await getWith('/v1/prices?ids=bitcoin', { host: `127.0.0.1:${port}`, origin: 'http://evil.example' });
  expect(keyed.status).toBe(200);
  expect(keyed.cors).toBe('*');
});
