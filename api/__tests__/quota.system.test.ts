// The quota (quota.ts) on its own, with the clock held: the fixed hour from a key's first request,
// the x-ratelimit-* headers and Retry-After worked out by hand, the 429 and 503 errors, and the
// Express middleware in a bare app. http.store.test.ts and quotaRedis.system.test.ts check it behind the real API;
// quotaRedis.system.test.ts also checks what needs a redis-server (the default prefix, a Redis that hangs).
import express from 'express';
import { pino } from 'pino';
import { afterEach, describe, expect, test, vi } from 'vitest';
import { ApiError, errorHandler } from '../errors.ts';
import type { VerifiedKey } from '../keys.ts';
import { createQuota, type Quota } from '../quota.ts';
import { requestId } from '../requestId.ts';
import type { Logger } from '../../infra/log.ts';
import { listenOnLoopback } from '../../test/support/apiHarness.ts';
import { freeLoopbackPort } from '../../test/support/ports.ts';
import { until } from '../../test/support/until.ts';

const start = Date.UTC(2026, 0, 1);
const hourMs = 3_600_000;

/** A logger whose lines are kept, parsed. */
function recordingLog() {
  const lines: { level: number; msg: string; err?: { message: string }; requestId?: string }[] = [];
  return { lines, log: pino({ level: 'info' }, { write: (s: string) => void lines.push(JSON.parse(s)) }) };
}

/** The ApiError `promise` rejects with. */
async function rejection(promise: Promise<unknown>): Promise<ApiError> {
  const err = await promise.then(() => undefined, (e: unknown) => e);
  expect(err).toBeInstanceOf(ApiError);
  return err as ApiError;
}

/**
 * vi.waitFor, with the faked Date held at `now` the whole time: vi.waitFor itself moves a faked
 * clock on by its interval at each check, so an error arriving between checks would see a later time.
 */
function waitWithClockAt(now: number, assertion: () => void): Promise<void> {
  vi.setSystemTime(now);
  return vi.waitFor(() => {
    vi.setSystemTime(now);
    assertion();
  }, { timeout: 5_000 });
}

const quotas: Quota[] = [];
afterEach(async () => {
  vi.useRealTimers();
  for (const q of quotas.splice(0)) await q.close();
});

describe('quota in this process', () => {
  test('counts down from perHour; reset is the whole seconds left of the hour, rounded up', async () => {
    vi.useFakeTimers({ toFake: ['Date'], now: start });
    const quota = createQuota({ perHour: 3 });
    quotas.push(quota);
    expect(await quota.consume('k')).toEqual({ 'x-ratelimit-limit': '3', 'x-ratelimit-remaining': '2', 'x-ratelimit-reset': '3600' });
    vi.setSystemTime(start + 1_500); // 3598.5 s left: 3599
    expect(await quota.consume('k')).toEqual({ 'x-ratelimit-limit': '3', 'x-ratelimit-remaining': '1', 'x-ratelimit-reset': '3599' });
    vi.setSystemTime(start + 1_000_001); // 2599.999 s left: 2600
    expect(await quota.consume('k')).toEqual({ 'x-ratelimit-limit': '3', 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': '2600' });
    // Another key has its own count.
    expect((await quota.consume('other'))['x-ratelimit-remaining']).toBe('2');
  });

  test('past perHour: 429 quota_exceeded, remaining 0 (not negative), Retry-After equal to the reset', async () => {
    vi.useFakeTimers({ toFake: ['Date'], now: start });
    const quota = createQuota({ perHour: 2 });
    quotas.push(quota);
    await quota.consume('k');
    await quota.consume('k');
    vi.setSystemTime(start + 600_400); // 2999.6 s left: 3000
    for (let i = 0; i < 2; i++) {
      const err = await rejection(quota.consume('k'));
      expect(err.status).toBe(429);
      expect(err.code).toBe('quota_exceeded');
      expect(err.message).toBe('more than 2 requests in the hour; retry in 3000 s');
      expect(err.headers).toEqual({ 'x-ratelimit-limit': '2', 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': '3000', 'Retry-After': '3000' });
    }
    // 1 ms before the hour ends the key is still over; at the hour a new window starts.
    vi.setSystemTime(start + hourMs - 1);
    expect((await rejection(quota.consume('k'))).headers['x-ratelimit-reset']).toBe('1');
    vi.setSystemTime(start + hourMs);
    expect(await quota.consume('k')).toEqual({ 'x-ratelimit-limit': '2', 'x-ratelimit-remaining': '1', 'x-ratelimit-reset': '3600' });
  });
});

/** A bare app as the API orders it: request id, the verified key (its hash from `x-key-hash`), the quota, one route. */
async function serveThroughQuota(quota: Quota, log: Logger): Promise<{ url: string; close(): Promise<void> }> {
  const app = express();
  app.use(requestId(log));
  // What requireKey leaves for the quota: the verified key (its hash is all the quota reads).
  app.use((req, res, next) => {
    res.locals.apiKey = { prefix: 'p', keyHash: String(req.headers['x-key-hash']) } satisfies VerifiedKey;
    next();
  });
  app.use(quota.middleware);
  app.get('/thing', (_req, res) => void res.json({ ok: true }));
  app.use(errorHandler);
  const server = await listenOnLoopback(app);
  return { url: `${server.url}/thing`, close: () => server.close() };
}

describe('quota middleware', () => {
  test('sets the headers on the response and answers 429 through the error handler', async () => {
    vi.useFakeTimers({ toFake: ['Date'], now: start });
    const quota = createQuota({ perHour: 1 });
    quotas.push(quota);
    const app = await serveThroughQuota(quota, recordingLog().log);
    try {
      const first = await fetch(app.url, { headers: { 'x-key-hash': 'a' } });
      expect(first.status).toBe(200);
      expect(await first.json()).toEqual({ ok: true });
      expect([first.headers.get('x-ratelimit-limit'), first.headers.get('x-ratelimit-remaining'), first.headers.get('x-ratelimit-reset')]).toEqual(['1', '0', '3600']);
      vi.setSystemTime(start + 10_000);
      const over = await fetch(app.url, { headers: { 'x-key-hash': 'a' } });
      expect(over.status).toBe(429);
      expect(over.headers.get('retry-after')).toBe('3590');
      expect((await over.json()).error.code).toBe('quota_exceeded');
      // Counted by key hash: another hash is untouched.
      expect((await fetch(app.url, { headers: { 'x-key-hash': 'b' } })).status).toBe(200);
    } finally {
      await app.close();
    }
  });

  test('answers 503 when the store fails, logged by the request logger with the request id', async () => {
    const { lines, log } = recordingLog();
    // No logger of the quota's own: the line can only come from the request's.
    const quota = createQuota({ perHour: 5, redisUrl: `redis://127.0.0.1:${await freeLoopbackPort()}` });
    quotas.push(quota);
    const app = await serveThroughQuota(quota, log);
    try {
      const res = await fetch(app.url, { headers: { 'x-key-hash': 'a', 'x-request-id': 'req-1' } });
      expect(res.status).toBe(503);
      expect(res.headers.get('retry-after')).toBe('5');
      expect((await res.json()).error.code).toBe('unavailable');
      expect(lines.filter((l) => l.msg === 'quota check failed').map((l) => [l.level, l.requestId])).toEqual([[50, 'req-1']]);
    } finally {
      await app.close();
    }
  });
});

describe('quota through an unreachable Redis', () => {
  test('answers 503 unavailable with Retry-After 5, logs the failure, and warns of the store once per 10 s', async () => {
    const { lines, log } = recordingLog();
    const quota = createQuota({ perHour: 5, redisUrl: `redis://127.0.0.1:${await freeLoopbackPort()}`, log });
    quotas.push(quota);
    const err = await rejection(quota.consume('k'));
    expect(err.status).toBe(503);
    expect(err.code).toBe('unavailable');
    expect(err.headers).toEqual({ 'Retry-After': '5' });
    expect(err.message).toBe('the request quota cannot be checked right now; retry in a few seconds');
    // Logged with the cause: the limiter refuses a client that is not connected (rejectIfRedisNotReady)
    // before the command reaches ioredis.
    expect(lines.filter((l) => l.msg === 'quota check failed').map((l) => [l.level, l.err?.message])).toEqual([[50, 'Redis connection is not ready']]);
    // ioredis reconnects every 50, 100, 150... ms and reports each failure: one warning in 10 s.
    const warned = () => lines.filter((l) => l.msg.includes('quota store (Redis) unreachable'));
    await until(() => warned().length > 0, 'the first warning of the unreachable Redis', { timeoutMs: 5_000 });
    expect(warned()[0]!.msg).toBe('quota store (Redis) unreachable; requests are answered 503');
    // The window is the point: its reconnection failures (about eight in 1.5 s) are seen only
    // through this warning, which must not come again.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(warned().map((l) => [l.level, typeof l.err?.message])).toEqual([[40, 'string']]);
  });

  test('close() stops the reconnection attempts: no warning once closed', async () => {
    vi.useFakeTimers({ toFake: ['Date'], now: start });
    const { lines, log } = recordingLog();
    const quota = createQuota({ perHour: 5, redisUrl: `redis://127.0.0.1:${await freeLoopbackPort()}`, log });
    quotas.push(quota);
    const warnings = () => lines.filter((l) => l.msg.includes('quota store (Redis) unreachable')).length;
    await waitWithClockAt(start, () => expect(warnings()).toBe(1));
    // Exactly 10 s later (the throttle's edge) the next failed attempt warns again...
    await waitWithClockAt(start + 10_000, () => expect(warnings()).toBe(2));
    await quota.close();
    // ...but not once closed.
    vi.setSystemTime(start + 22_000);
    // The window is the point: an attempt that close() failed to stop would warn within it.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(warnings()).toBe(2);
  });

  test('without a logger it still answers 503 (no TypeError from the missing log)', async () => {
    const quota = createQuota({ perHour: 5, redisUrl: `redis://127.0.0.1:${await freeLoopbackPort()}` });
    quotas.push(quota);
    expect((await rejection(quota.consume('k'))).status).toBe(503);
    // The window is the point: reconnection errors keep coming in it, and none may throw in the error listener.
    await new Promise((resolve) => setTimeout(resolve, 300));
  });
});
