import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createApp } from '../app.ts';
import { KeyStore } from '../keys.ts';
import { createQuota, type Quota } from '../quota.ts';
import { listenOnLoopback, useTestApi, type LoopbackServer } from '../../test/support/apiHarness.ts';
import { get, silentLog, testConfig } from '../../test/support/harness.ts';
import { until } from '../../test/support/until.ts';

const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
type ErrorBody = { error: { code: string; message: string; status: number } };
const perHour = 5;

// The store; the app is built here, with a KeyStore and a quota of the test's own.
const harness = useTestApi({ listen: false });
let api: LoopbackServer;
let quota: Quota;
// The app and the test share one KeyStore, as one replica does: its own changes apply at once.
let keys: KeyStore;
const refreshMs = 300;

beforeAll(async () => {
  keys = new KeyStore(harness.store, { refreshMs });
  expect(await keys.start(silentLog)).toBe(true);
  quota = createQuota({ perHour });
  api = await listenOnLoopback(createApp({ store: harness.store, keys, quota, config: testConfig(), log: silentLog }));
});

afterAll(async () => {
  keys?.close();
  await api?.close();
  await quota?.close();
});

/** A fresh key per test, so each test has its own quota. */
const newKey = async () => (await keys.create('http-test')).key;

describe('API keys', () => {

  it('answers 401 missing_key without a key, with the error body and a request id', async () => {
    const attempts: Record<string, string>[] = [{}, { authorization: 'Basic dXNlcjpwYXNz' }, { 'x-api-key': '' }, { authorization: 'Bearer' }];
    for (const headers of attempts) {
      const res = await get(`${api.url}/v1/prices`, headers);
      expect(res.status).toBe(401);
      expect(res.json).toEqual({ error: { code: 'missing_key', message: expect.stringContaining('x-api-key'), status: 401 } });
      expect(res.headers.get('x-request-id')).toMatch(uuid);
      expect(res.headers.get('www-authenticate')).toMatch(/^Bearer/);
      expect(res.headers.get('x-ratelimit-limit')).toBeNull();
    }
  });

  it('answers 401 invalid_key for an unknown key, by either header', async () => {
    const attempts: Record<string, string>[] = [{ 'x-api-key': 'mds_unknownunknownunknownunknown1' }, { authorization: 'Bearer mds_unknownunknownunknownunknown1' }];
    for (const headers of attempts) {
      const res = await get(`${api.url}/v1/prices`, headers);
      expect(res.status).toBe(401);
      expect((res.json as ErrorBody).error).toMatchObject({ code: 'invalid_key', status: 401 });
    }
  });

  it('accepts a key by x-api-key or by Authorization: Bearer, and refuses it once revoked', async () => {
    const { key, prefix } = await keys.create('to-revoke');
    expect(key).toMatch(/^mds_[A-Za-z0-9]{32}$/);
    expect(prefix).toBe(key.slice(0, 8));
    expect((await get(`${api.url}/v1/prices`, { 'x-api-key': key })).status).toBe(200);
    expect((await get(`${api.url}/v1/prices`, { authorization: `bearer ${key}` })).status).toBe(200);

    expect(await keys.revoke(prefix)).toBe(1);
    const attempts: Record<string, string>[] = [{ 'x-api-key': key }, { authorization: `Bearer ${key}` }];
    for (const headers of attempts) {
      const res = await get(`${api.url}/v1/prices`, headers);
      expect(res.status).toBe(401);
      expect((res.json as ErrorBody).error.code).toBe('invalid_key');
    }
    expect(await keys.revoke(prefix)).toBe(0);
  });

  it('accepts a key made by another process within the refresh interval', async () => {
    const elsewhere = await new KeyStore(harness.store).create('made-elsewhere');
    let status = 0;
    // Unknown (401) until this replica reloads its keys; then served.
    await until(async () => (status = (await get(`${api.url}/v1/prices`, { 'x-api-key': elsewhere.key })).status) !== 401, 'the key made elsewhere to be known', {
      timeoutMs: 10 * refreshMs,
      everyMs: 50,
    });
    expect(status).toBe(200);
  });

  it('makes a revocation effective on another replica within its refresh interval', async () => {
    const { key, prefix } = await keys.create('replica');
    const replica = new KeyStore(harness.store, { refreshMs });
    try {
      await replica.start(silentLog);
      expect(replica.verify(key)).toMatchObject({ prefix });
      await keys.revoke(prefix);
      const revokedAt = performance.now();
      await until(() => replica.verify(key) === undefined, 'the replica to drop the revoked key', { timeoutMs: 10 * refreshMs, everyMs: 50 });
      // One interval, plus the reload's own query and the polling step.
      expect(performance.now() - revokedAt).toBeLessThan(refreshMs + 500);
    } finally {
      replica.close();
    }
  });

  it('stores keys only hashed, and lists them without the key', async () => {
    const { key, prefix } = await keys.create('listed');
    const dump = JSON.stringify(await harness.store.rows('SELECT * FROM api_keys'));
    expect(dump).not.toContain(key);
    expect(dump).toContain(prefix);
    const listed = (await keys.list()).find((k) => k.prefix === prefix);
    expect(listed).toEqual({ prefix, name: 'listed', createdAt: expect.any(Number), revokedAt: null, legacy: false });
    expect(JSON.stringify(await keys.list())).not.toContain(key);
  });

  it('provisions a chosen key once with ensure, and keeps a revoked one revoked', async () => {
    const chosen = 'demo-key-0123456789abcdef';
    expect(await keys.ensure(chosen, 'demo')).toEqual({ prefix: chosen.slice(0, 8), created: true });
    expect(await keys.ensure(chosen, 'demo')).toEqual({ prefix: chosen.slice(0, 8), created: false });
    expect((await get(`${api.url}/v1/prices`, { 'x-api-key': chosen })).status).toBe(200);
    expect((await keys.list()).filter((k) => k.prefix === chosen.slice(0, 8))).toHaveLength(1);
    await keys.revoke(chosen.slice(0, 8));
    await expect(keys.ensure(chosen, 'demo')).rejects.toThrow(/revoked/);
  });

});

describe('quota, errors and request ids', () => {
  it('sets the quota headers and answers 429 quota_exceeded with Retry-After once the hour is used up', async () => {
    const key = await newKey();
    // The window is a fixed hour from the key's first request; reset is the whole seconds left, rounded
    // up. With the clock held and stepped 61.5 s per request, every reset is exact.
    const first = Date.now();
    const step = 61_500;
    const resetAt = (elapsedMs: number) => String(Math.ceil((3_600_000 - elapsedMs) / 1000));
    vi.useFakeTimers({ toFake: ['Date'], now: first });
    try {
      for (let i = 1; i <= perHour; i++) {
        vi.setSystemTime(first + (i - 1) * step);
        const res = await get(`${api.url}/v1/prices`, { 'x-api-key': key });
        expect(res.status).toBe(200);
        expect(res.headers.get('x-ratelimit-limit')).toBe(String(perHour));
        expect(res.headers.get('x-ratelimit-remaining')).toBe(String(perHour - i));
        expect(res.headers.get('x-ratelimit-reset')).toBe(resetAt((i - 1) * step));
      }
      expect(resetAt(0)).toBe('3600');
      vi.setSystemTime(first + perHour * step);
      const over = await get(`${api.url}/v1/prices`, { 'x-api-key': key });
      expect(over.status).toBe(429);
      expect(over.json).toEqual({ error: { code: 'quota_exceeded', message: expect.any(String), status: 429 } });
      expect(over.headers.get('x-ratelimit-remaining')).toBe('0');
      expect(over.headers.get('x-ratelimit-reset')).toBe(resetAt(perHour * step));
      expect(over.headers.get('retry-after')).toBe(over.headers.get('x-ratelimit-reset'));
      expect(over.headers.get('x-request-id')).toMatch(uuid);
    } finally {
      vi.useRealTimers();
    }

    // The quota is per key: another key is untouched.
    const other = await get(`${api.url}/v1/prices`, { 'x-api-key': await newKey() });
    expect(other.status).toBe(200);
    expect(other.headers.get('x-ratelimit-remaining')).toBe(String(perHour - 1));
  });

  it('answers unknown paths with 404 not_found and other methods on known paths with 405', async () => {
    const key = await newKey();
    const missing = await get(`${api.url}/v1/nothing-here`, { 'x-api-key': key });
    expect(missing.status).toBe(404);
    expect(missing.json).toEqual({ error: { code: 'not_found', message: expect.stringContaining('/v1/nothing-here'), status: 404 } });
    expect(missing.headers.get('x-ratelimit-limit')).toBe(String(perHour));

    for (const path of ['/v1/prices', '/v1/coins/bitcoin/ohlc']) {
      const res = await get(`${api.url}${path}`, { 'x-api-key': key }, 'POST');
      expect(res.status).toBe(405);
      expect(res.json).toEqual({ error: { code: 'method_not_allowed', message: expect.any(String), status: 405 } });
      expect(res.headers.get('allow')).toBe('GET, HEAD');
    }

    const malformed = await get(`${api.url}/v1/coins/%E0%A4%A/ohlc`, { 'x-api-key': key });
    expect(malformed.status).toBe(400);
    expect((malformed.json as ErrorBody).error.code).toBe('bad_request');
    expect(missing.headers.get('x-powered-by')).toBeNull();
  });

  it('echoes a sane x-request-id and replaces anything else with a generated one', async () => {
    const sane = 'req-2026.11:abc_DEF-1';
    const echoed = await get(`${api.url}/v1/prices`, { 'x-request-id': sane });
    expect(echoed.headers.get('x-request-id')).toBe(sane);

    const longest = 'a'.repeat(128);
    expect((await get(`${api.url}/v1/prices`, { 'x-request-id': longest })).headers.get('x-request-id')).toBe(longest);

    for (const bad of ['a'.repeat(129), 'has space', 'semi;colon', '%0d%0aSet-Cookie:x', 'quo"te']) {
      expect((await get(`${api.url}/v1/prices`, { 'x-request-id': bad })).headers.get('x-request-id')).toMatch(uuid);
    }

    const a = (await get(`${api.url}/v1/prices`)).headers.get('x-request-id');
    const b = (await get(`${api.url}/v1/prices`)).headers.get('x-request-id');
    expect(a).toMatch(uuid);
    expect(b).toMatch(uuid);
    expect(a).not.toBe(b);
  });
});
