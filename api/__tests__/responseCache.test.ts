import { randomBytes } from 'node:crypto';
import { afterEach, expect, test, vi } from 'vitest';
import { ApiError } from '../errors.ts';
import { ResponseCache } from '../responseCache.ts';

afterEach(() => vi.useRealTimers());

const served = async (got: ReturnType<ResponseCache['get']>) => {
  const { entry, stale } = await got;
  return { body: JSON.parse(entry.body.toString()) as unknown, stale };
};
const storeDown = () => Promise.reject(new Error('store down'));

test('fresh for its interval, then served stale once more while the next body is built, then waited for', async () => {
  vi.useFakeTimers({ toFake: ['Date'], now: 1_000_000 });
  const cache = new ResponseCache(5_000);
  let version = 0;
  let release: () => void = () => {};
  const build = vi.fn(async () => {
    version += 1;
    const v = version;
    if (v > 1) await new Promise<void>((r) => (release = r));
    return { v };
  });

  // The first request of a key waits for its build.
  const first = cache.get('k', build);
  expect(first).toBeInstanceOf(Promise);
  expect(await served(first)).toEqual({ body: { v: 1 }, stale: false });
  // Within the interval: the same entry, no build.
  vi.setSystemTime(1_004_999);
  expect(cache.get('k', build)).not.toBeInstanceOf(Promise);
  expect(build).toHaveBeenCalledTimes(1);

  // Expired, within one more interval: the old body at once, one rebuild for any number of requests.
  vi.setSystemTime(1_006_000);
  expect(await served(cache.get('k', build))).toEqual({ body: { v: 1 }, stale: false });
  expect(await served(cache.get('k', build))).toEqual({ body: { v: 1 }, stale: false });
  expect(build).toHaveBeenCalledTimes(2);
  release();
  await vi.waitFor(async () => expect((await served(cache.get('k', build))).body).toEqual({ v: 2 }));
  expect(build).toHaveBeenCalledTimes(2);

  // Past the stale interval too (vi.waitFor moved the fake clock a little): the request waits for the new body.
  vi.setSystemTime(1_030_000);
  const late = cache.get('k', build);
  expect(late).toBeInstanceOf(Promise);
  release();
  expect((await served(late)).body).toEqual({ v: 3 });
});

test('a store failure serves the last body marked stale, up to 15 minutes past its expiry, without waiting once it is known', async () => {
  vi.useFakeTimers({ toFake: ['Date'], now: 0 });
  const cache = new ResponseCache(1_000);
  await cache.get('k', async () => ({ ok: true }));

  // Past the stale-while-revalidate interval: the request waits for the rebuild, which fails: the old body, stale.
  vi.setSystemTime(5_000);
  const failing = vi.fn(storeDown);
  const first = cache.get('k', failing);
  expect(first).toBeInstanceOf(Promise);
  expect(await served(first)).toEqual({ body: { ok: true }, stale: true });
  // Now that the key is failing, later requests get the stale body at once.
  vi.setSystemTime(10_000);
  const next = cache.get('k', failing);
  expect(next).not.toBeInstanceOf(Promise);
  expect(await served(next)).toEqual({ body: { ok: true }, stale: true });

  // 15 minutes past its expiry (1 s): still served; a moment later, the failure reaches the caller.
  vi.setSystemTime(1_000 + 15 * 60_000 - 1);
  expect(await served(cache.get('k', failing))).toEqual({ body: { ok: true }, stale: true });
  vi.setSystemTime(1_000 + 15 * 60_000 + 2_000);
  await expect(cache.get('k', failing)).rejects.toThrow('store down');

  // The store is back: the next rebuild replaces the body, which is fresh again.
  vi.setSystemTime(1_000 + 15 * 60_000 + 4_000);
  expect(await served(cache.get('k', async () => ({ ok: 'again' })))).toEqual({ body: { ok: 'again' }, stale: false });
});

test('a failing key is rebuilt once at a time, and at most once a second while it fails', async () => {
  vi.useFakeTimers({ toFake: ['Date'], now: 0 });
  const cache = new ResponseCache(1_000);
  let fail: (err: Error) => void = () => {};
  const build = vi.fn(() => new Promise<unknown>((_resolve, reject) => (fail = reject)));

  // Ten concurrent requests of a cold key: one build, and all ten get its failure.
  const waiting = Array.from({ length: 10 }, () => cache.get('cold', build));
  expect(build).toHaveBeenCalledTimes(1);
  fail(new Error('store down'));
  for (const w of waiting) await expect(w).rejects.toThrow('store down');

  // Within a second of the failure: refused at once, from memory.
  vi.setSystemTime(999);
  await expect(cache.get('cold', build)).rejects.toThrow('store down');
  expect(build).toHaveBeenCalledTimes(1);
  // A second later, one request tries the store again.
  vi.setSystemTime(1_001);
  const retry = cache.get('cold', build);
  expect(build).toHaveBeenCalledTimes(2);
  fail(new Error('still down'));
  await expect(retry).rejects.toThrow('still down');
});

test('an ApiError from a build is the answer, not an outage: no stale body, no wait before the next build', async () => {
  vi.useFakeTimers({ toFake: ['Date'], now: 0 });
  const cache = new ResponseCache(1_000);
  await cache.get('k', async () => ({ ok: true }));
  vi.setSystemTime(5_000);
  const gone = vi.fn(() => Promise.reject(new ApiError(404, 'not_found', 'gone')));
  await expect(cache.get('k', gone)).rejects.toThrow('gone');
  await expect(cache.get('k', gone)).rejects.toThrow('gone');
  expect(gone).toHaveBeenCalledTimes(2);
});

test('holds at most maxBytes of bodies and their compressed forms, dropping the oldest build first', async () => {
  const cache = new ResponseCache(60_000, { maxBytes: 10_000 });
  // Bodies of 4,002 bytes (a JSON string of 4,000 characters).
  const body = (c: string) => async () => c.repeat(4_000);
  await cache.get('a', body('a'));
  await cache.get('b', body('b'));
  const isCached = (key: string) => {
    const got = cache.get(key, storeDown);
    if (got instanceof Promise) got.catch(() => {});
    return !(got instanceof Promise);
  };
  expect([isCached('a'), isCached('b')]).toEqual([true, true]);

  // A third body passes the budget: the oldest goes.
  await cache.get('c', body('c'));
  expect([isCached('b'), isCached('c')]).toEqual([true, true]);
  const evicted = cache.get('a', storeDown);
  expect(evicted).toBeInstanceOf(Promise);
  await expect(evicted).rejects.toThrow('store down');

  // Compressed forms count too. 1,502 bytes of hex fit beside b and c (9,506 of 10,000); its gzip form
  // (hex compresses to about half) does not, and b, now the oldest, goes.
  const r = await cache.get('r', async () => randomBytes(750).toString('hex'));
  expect([isCached('b'), isCached('c'), isCached('r')]).toEqual([true, true, true]);
  expect((await cache.encodedBody(r.entry, 'gzip')).length).toBeGreaterThan(500);
  await vi.waitFor(() => expect(isCached('b')).toBe(false));
  expect([isCached('c'), isCached('r')]).toEqual([true, true]);
});
