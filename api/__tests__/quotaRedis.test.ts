import { createHmac, randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Store } from '../../infra/store.ts';
import { KeyStore } from '../keys.ts';
import { startApi, type ApiServer } from '../server.ts';
import { get, openTestStore, silentLog, testConfig } from '../../test/support/harness.ts';
import { resetBounds, type RequestTiming } from '../../test/support/quotaWindow.ts';
import { freeLoopbackPort } from '../../test/support/ports.ts';

/** test/run.sh starts a redis-server and sets this; without it the shared quota is untested, which must not pass silently. */
function redisUrl(): string {
  const url = process.env.MDS_TEST_REDIS_URL;
  if (!url) throw new Error('MDS_TEST_REDIS_URL is not set: run the tests through `npm test` (test/run.sh starts redis-server), or start one and export MDS_TEST_REDIS_URL=redis://127.0.0.1:<port>');
  return url;
}


describe('quota shared through Redis', () => {
  let store: Store;
  let dispose: () => Promise<void>;
  const servers: ApiServer[] = [];

  beforeAll(async () => {
    ({ store, dispose } = await openTestStore());
  });

  afterAll(async () => {
    for (const s of servers) await s.close();
    await dispose?.();
  });

  it('is shared by two API instances: one key gets 10 requests in all, whichever instance answers', async () => {
    const config = testConfig({ QUOTA_PER_HOUR: '10', REDIS_URL: redisUrl() });
    // A fresh namespace per run, so counters left in Redis by an earlier run do not count.
    const quotaKeyPrefix = `mds-test:${randomUUID()}`;
    // Made before the instances start, so both hold them from their first load of the keys.
    const secret = randomUUID().repeat(2);
    const { key } = await new KeyStore(store, { secret }).create('shared-quota');
    const other = await new KeyStore(store, { secret }).create('other');
    // chDB binds one data dir per process: both instances share one store, as replicas share a ClickHouse.
    const a = await startApi({ store, config, log: silentLog, quotaKeyPrefix, keyStore: { secret } });
    servers.push(a);
    const b = await startApi({ store, config, log: silentLog, quotaKeyPrefix, keyStore: { secret } });
    servers.push(b);

    const remaining: string[] = [];
    let first: RequestTiming | undefined;
    for (const url of [...Array(6).fill(a.url), ...Array(4).fill(b.url)] as string[]) {
      const sentAt = Date.now();
      const res = await get(`${url}/v1/prices`, { 'x-api-key': key });
      first ??= { sentAt, receivedAt: Date.now() };
      expect(res.status).toBe(200);
      expect(res.headers.get('x-ratelimit-limit')).toBe('10');
      remaining.push(res.headers.get('x-ratelimit-remaining')!);
    }
    expect(remaining).toEqual(['9', '8', '7', '6', '5', '4', '3', '2', '1', '0']);

    for (const url of [a.url, b.url]) {
      const sentAt = Date.now();
      const res = await get(`${url}/v1/prices`, { 'x-api-key': key });
      const [min, max] = resetBounds(first!, { sentAt, receivedAt: Date.now() });
      expect(res.status).toBe(429);
      expect((res.json as { error: { code: string } }).error.code).toBe('quota_exceeded');
      // The hour from the first request, whichever replica answers.
      const reset = Number(res.headers.get('retry-after'));
      expect(reset).toBeGreaterThanOrEqual(min);
      expect(reset).toBeLessThanOrEqual(max);
    }

    // Another key has its own count.
    expect((await get(`${b.url}/v1/prices`, { 'x-api-key': other.key })).status).toBe(200);

    // Redis holds one counter per keyed hash (HMAC under the server secret), never a key.
    const redis = new Redis(redisUrl());
    try {
      const stored = await redis.keys(`${quotaKeyPrefix}:*`);
      const hashOf = (k: string) => createHmac('sha256', secret).update(k).digest('hex');
      expect(stored.sort()).toEqual([`${quotaKeyPrefix}:${hashOf(key)}`, `${quotaKeyPrefix}:${hashOf(other.key)}`].sort());
      expect(await redis.get(`${quotaKeyPrefix}:${hashOf(key)}`)).toBe('12');
    } finally {
      redis.disconnect();
    }
  });

  it('answers 503 unavailable, not an uncounted 200, when Redis is unreachable', async () => {
    const config = testConfig({ REDIS_URL: `redis://127.0.0.1:${await freeLoopbackPort()}` });
    const { key } = await new KeyStore(store).create('no-redis');
    const api = await startApi({ store, config, log: silentLog });
    servers.push(api);
    for (let i = 0; i < 2; i++) {
      const res = await get(`${api.url}/v1/prices`, { 'x-api-key': key });
      expect(res.status).toBe(503);
      expect(res.json).toEqual({ error: { code: 'unavailable', message: expect.stringContaining('quota'), status: 503 } });
      expect(res.headers.get('x-request-id')).toBeTruthy();
      expect(res.headers.get('x-ratelimit-limit')).toBeNull();
    }
  });
});
