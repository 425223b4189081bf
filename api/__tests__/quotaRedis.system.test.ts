import { createHmac, randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { connect, createServer, type AddressInfo, type Socket } from 'node:net';
import { Redis } from 'ioredis';
import { describe, expect, it, vi } from 'vitest';
import { ApiError } from '../errors.ts';
import { KeyStore } from '../keys.ts';
import { createQuota, type Quota } from '../quota.ts';
import { useTestApi } from '../../test/support/apiHarness.ts';
import { get } from '../../test/support/harness.ts';
import { untilValue } from '../../test/support/until.ts';
import { resetBounds, type RequestTiming } from '../../test/support/quotaWindow.ts';
import { freeLoopbackPort } from '../../test/support/ports.ts';

/** test/run.sh starts a redis-server and sets this; without it the shared quota is untested, which must not pass silently. */
function redisUrl(): string {
  const url = process.env.MDS_TEST_REDIS_URL;
  if (!url) throw new Error('MDS_TEST_REDIS_URL is not set: run the tests through `npm test` (test/run.sh starts redis-server), or start one and export MDS_TEST_REDIS_URL=redis://127.0.0.1:<port>');
  return url;
}


describe('quota shared through Redis', () => {
  // The store; each test makes its keys and starts its APIs on it.
  const harness = useTestApi({ listen: false });

  it('is shared by two API instances: one key gets 10 requests in all, whichever instance answers', async () => {
    const { store } = harness;
    const env = { QUOTA_PER_HOUR: '10', REDIS_URL: redisUrl() };
    // A fresh namespace per run, so counters left in Redis by an earlier run do not count.
    const quotaKeyPrefix = `mds-test:${randomUUID()}`;
    // Made before the instances start, so both hold them from their first load of the keys.
    const secret = randomUUID().repeat(2);
    const { key } = await new KeyStore(store, { secret }).create('shared-quota');
    const other = await new KeyStore(store, { secret }).create('other');
    // chDB binds one data dir per process: both instances share one store, as replicas share a ClickHouse.
    const a = await harness.serve({ env, quotaKeyPrefix, keyStore: { secret } });
    const b = await harness.serve({ env, quotaKeyPrefix, keyStore: { secret } });

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
    const { key } = await new KeyStore(harness.store).create('no-redis');
    const api = await harness.serve({ env: { REDIS_URL: `redis://127.0.0.1:${await freeLoopbackPort()}` } });
    for (let i = 0; i < 2; i++) {
      const res = await get(`${api.url}/v1/prices`, { 'x-api-key': key });
      expect(res.status).toBe(503);
      expect(res.json).toEqual({ error: { code: 'unavailable', message: expect.stringContaining('quota'), status: 503 } });
      expect(res.headers.get('x-request-id')).toBeTruthy();
      expect(res.headers.get('x-ratelimit-limit')).toBeNull();
    }
  });
});

/** A loopback proxy to the redis-server that can stop passing commands on: a Redis that hangs (paused, or a dead peer). */
async function stallingProxy(target: URL): Promise<{ url: string; stall(): void; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  let stalled = false;
  const server = createServer((client) => {
    const upstream = connect(Number(target.port), target.hostname);
    sockets.add(client).add(upstream);
    client.on('data', (chunk) => {
      if (!stalled) upstream.write(chunk);
    });
    upstream.pipe(client);
    for (const [socket, peer] of [[client, upstream], [upstream, client]] as const) {
      socket.on('error', () => undefined).on('close', () => peer.destroy());
    }
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `redis://127.0.0.1:${(server.address() as AddressInfo).port}`,
    stall: () => void (stalled = true),
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** The first count once the client is connected (a first request waits up to 2 s for the connection; retried past that on a loaded machine). */
function firstConsume(quota: Quota, keyHash: string): Promise<Record<string, string>> {
  return untilValue(() => quota.consume(keyHash), 'the quota client to connect to Redis', { timeoutMs: 2_000, everyMs: 10 });
}

describe('createQuota on a redis-server', () => {
  it('keeps its counters under mds:quota when given no prefix', async () => {
    const quota = createQuota({ perHour: 5, redisUrl: redisUrl() });
    const keyHash = randomUUID();
    try {
      expect((await firstConsume(quota, keyHash))['x-ratelimit-remaining']).toBe('4');
    } finally {
      await quota.close();
    }
    const redis = new Redis(redisUrl());
    try {
      expect(await redis.keys(`*${keyHash}*`)).toEqual([`mds:quota:${keyHash}`]);
      expect(await redis.get(`mds:quota:${keyHash}`)).toBe('1');
    } finally {
      redis.disconnect();
    }
  });

  it('counts a request made as the client starts: it waits for the first connection instead of answering 503', async () => {
    const quota = createQuota({ perHour: 5, redisUrl: redisUrl(), keyPrefix: `mds-test:${randomUUID()}` });
    try {
      expect((await quota.consume('k'))['x-ratelimit-remaining']).toBe('4');
    } finally {
      await quota.close();
    }
  });

  it('answers 503 when Redis stops answering, after its 2 s command timeout rather than never', async () => {
    const proxy = await stallingProxy(new URL(redisUrl()));
    const quota = createQuota({ perHour: 5, redisUrl: proxy.url, keyPrefix: `mds-test:${randomUUID()}` });
    try {
      await firstConsume(quota, 'k');
      proxy.stall();
      // The command timeout is the only timer started from here on: held, it runs out when told.
      vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
      let status: number | undefined;
      void quota.consume('k').then(
        () => (status = 200),
        (err: unknown) => (status = err instanceof ApiError ? err.status : -1),
      );
      const settle = () => new Promise((resolve) => setImmediate(resolve));
      await settle();
      await vi.advanceTimersByTimeAsync(1_999);
      await settle();
      expect(status).toBeUndefined();
      await vi.advanceTimersByTimeAsync(1);
      await settle();
      expect(status).toBe(503);
    } finally {
      vi.useRealTimers();
      await proxy.close();
      await quota.close();
    }
  });
});
