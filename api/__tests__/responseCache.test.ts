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
/** Whether the cache answers the key at once, from memory, rather than making the request wait on a build. */
const isCached = (cache: ResponseCache, key: string) => {
  const got = cache.get(key, storeDown);
  if (got instanceof Promise) got.catch(() => {});
  return !(got instanceof Promise);
};
/** Lets a build that runs on microtasks alone finish: setImmediate runs once they are drained. */
const settled = () => new Promise<void>((resolve) => setImmediate(resolve));

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
  const duringRebuild = [cache.get('k', build), cache.get('k', build)];
  // Checked before awaiting them: one that waited would wait for the held build, and time out.
  expect(duringRebuild.map((got) => got instanceof Promise)).toEqual([false, false]);
  for (const got of duringRebuild) expect(await served(got)).toEqual({ body: { v: 1 }, stale: false });
  expect(build).toHaveBeenCalledTimes(2);
  release();
  await settled();
  expect((await served(cache.get('k', build))).body).toEqual({ v: 2 });
  expect(build).toHaveBeenCalledTimes(2);

  // Past the stale interval too: the request waits for the new body.
  vi.setSystemTime(1_030_000);
  const late = cache.get('k', build);
  expect(late).toBeInstanceOf(Promise);
  release();
  expect((await served(late)).body).toEqual({ v: 3 });
});

test.each([
  { at: 999, atOnce: true, v: 1, builds: 1 }, // fresh
  { at: 1_000, atOnce: true, v: 1, builds: 2 }, // expired: served while the next body is built
  { at: 1_999, atOnce: true, v: 1, builds: 2 },
  { at: 2_000, atOnce: false, v: 2, builds: 2 }, // one interval past its expiry: the request waits
])('$at ms after its build (1 s interval): answered at once $atOnce, body $v, $builds builds', async ({ at, atOnce, v, builds }) => {
  vi.useFakeTimers({ toFake: ['Date'], now: 0 });
  const cache = new ResponseCache(1_000);
  let version = 0;
  const build = vi.fn(async () => ({ v: (version += 1) }));
  await cache.get('k', build);
  vi.setSystemTime(at);
  const got = cache.get('k', build);
  expect(got instanceof Promise).toBe(!atOnce);
  expect(await served(got)).toEqual({ body: { v }, stale: false });
  expect(build).toHaveBeenCalledTimes(builds);
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

  // Up to 15 minutes past its expiry (1 s): still served; from that millisecond on, the failure reaches the caller.
  vi.setSystemTime(1_000 + 15 * 60_000 - 1);
  expect(await served(cache.get('k', failing))).toEqual({ body: { ok: true }, stale: true });
  vi.setSystemTime(1_000 + 15 * 60_000);
  await expect(cache.get('k', failing)).rejects.toThrow('store down');

  // The store is back: the next rebuild replaces the body, which is fresh again; the failure is
  // forgotten, so once the new body expires it is served while rebuilt, not marked stale.
  const back = async () => ({ ok: 'again' });
  vi.setSystemTime(1_000 + 15 * 60_000 + 4_000);
  expect(await served(cache.get('k', back))).toEqual({ body: { ok: 'again' }, stale: false });
  vi.setSystemTime(1_000 + 15 * 60_000 + 5_000);
  const expired = cache.get('k', back);
  expect(expired).not.toBeInstanceOf(Promise);
  expect(await served(expired)).toEqual({ body: { ok: 'again' }, stale: false });
});

test('a failing key is rebuilt once at a time, and at most once a second while it fails', async () => {
  // Not at 0, so that the failure's time is not 0.
  vi.useFakeTimers({ toFake: ['Date'], now: 10_000 });
  const cache = new ResponseCache(1_000);
  let fail: (err: Error) => void = () => {};
  const build = vi.fn(() => new Promise<unknown>((_resolve, reject) => (fail = reject)));

  // Ten concurrent requests of a cold key: one build, and all ten get its failure.
  const waiting = Array.from({ length: 10 }, () => cache.get('cold', build));
  expect(build).toHaveBeenCalledTimes(1);
  fail(new Error('store down'));
  for (const w of waiting) await expect(w).rejects.toThrow('store down');

  // Within a second of the failure: refused at once, from memory.
  vi.setSystemTime(10_999);
  const refused = cache.get('cold', build);
  // Counted before awaiting: a build started here would never settle.
  expect(build).toHaveBeenCalledTimes(1);
  await expect(refused).rejects.toThrow('store down');
  // From a second after it, one request tries the store again.
  vi.setSystemTime(11_000);
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

test('remembers the failures of at most maxEntries keys, forgetting the oldest failure first', async () => {
  vi.useFakeTimers({ toFake: ['Date'], now: 0 });
  const cache = new ResponseCache(1_000, { maxEntries: 2 });
  const build = vi.fn(storeDown);
  const fails = (key: string) => expect(cache.get(key, build)).rejects.toThrow('store down');
  await fails('a');
  vi.setSystemTime(500);
  await fails('b');
  // Two failures, within the bound: a is still refused from memory.
  await fails('a');
  expect(build).toHaveBeenCalledTimes(2);

  // A second after its failure a is tried again and fails again: it is now the newest failure.
  // c's failure makes three, and b's, now the oldest, is forgotten.
  vi.setSystemTime(1_000);
  await fails('a');
  await fails('c');
  expect(build).toHaveBeenCalledTimes(4);
  await fails('a');
  await fails('c');
  expect(build).toHaveBeenCalledTimes(4);
  // b goes to the store again only 500 ms after its failure.
  await fails('b');
  expect(build).toHaveBeenCalledTimes(5);
});

test('holds at most maxEntries keys, dropping the oldest build first; a rebuilt key is the newest', async () => {
  vi.useFakeTimers({ toFake: ['Date'], now: 0 });
  const cache = new ResponseCache(10_000, { maxEntries: 2 });
  const build = async () => ({ ok: true });
  await cache.get('a', build);
  vi.setSystemTime(5_000);
  await cache.get('b', build);
  expect([isCached(cache, 'a'), isCached(cache, 'b')]).toEqual([true, true]);

  // a, one interval past its expiry, is rebuilt: b, still servable, is now the oldest build, and goes when c comes.
  vi.setSystemTime(20_000);
  await cache.get('a', build);
  await cache.get('c', build);
  expect([isCached(cache, 'a'), isCached(cache, 'c'), isCached(cache, 'b')]).toEqual([true, true, false]);
});

test('holds at most maxBytes of bodies and their compressed forms, dropping the oldest build first', async () => {
  const cache = new ResponseCache(60_000, { maxBytes: 10_000 });
  // Bodies of 4,002 bytes (a JSON string of 4,000 characters).
  const body = (c: string) => async () => c.repeat(4_000);
  await cache.get('a', body('a'));
  await cache.get('b', body('b'));
  expect([isCached(cache, 'a'), isCached(cache, 'b')]).toEqual([true, true]);

  // A third body passes the budget: the oldest goes.
  await cache.get('c', body('c'));
  expect([isCached(cache, 'b'), isCached(cache, 'c')]).toEqual([true, true]);
  const evicted = cache.get('a', storeDown);
  expect(evicted).toBeInstanceOf(Promise);
  await expect(evicted).rejects.toThrow('store down');

  // Compressed forms count too. 1,996 bytes of hex fill the budget beside b and c (exactly 10,000);
  // its gzip form (hex compresses to about half) does not fit, and b, now the oldest, goes.
  const r = await cache.get('r', async () => randomBytes(997).toString('hex'));
  expect([isCached(cache, 'b'), isCached(cache, 'c'), isCached(cache, 'r')]).toEqual([true, true, true]);
  expect((await cache.encodedBody(r.entry, 'gzip')).length).toBeGreaterThan(500);
  // Counted by the time the compressed form is handed out (its first reaction, the accounting, has run).
  expect(isCached(cache, 'b')).toBe(false);
  expect([isCached(cache, 'c'), isCached(cache, 'r')]).toEqual([true, true]);
});

test('a compressed form is made once, and counts against the byte budget while its entry is held, and no longer', async () => {
  vi.useFakeTimers({ toFake: ['Date'], now: 0 });
  // Three bodies of 1,002 bytes (JSON strings of 1,000 characters) fill the budget exactly.
  const cache = new ResponseCache(1_000, { maxBytes: 3 * 1_002 });
  const body = async () => 'x'.repeat(1_000);
  const { entry: x } = await cache.get('x', body);
  const gzipped = await cache.encodedBody(x, 'gzip');
  await expect(cache.encodedBody(x, 'gzip')).resolves.toBe(gzipped);
  vi.setSystemTime(1_500);
  await cache.get('y', body);

  // One interval past its expiry x is rebuilt, and replaced while its brotli form is being made
  // (the rebuild runs on microtasks alone, compression on the thread pool).
  vi.setSystemTime(2_000);
  const lateBrotli = cache.encodedBody(x, 'br');
  await cache.get('x', body);
  await lateBrotli;
  // Neither form of the replaced entry is counted any more: a third body fits beside y and the new x.
  await cache.get('z', body);
  expect([isCached(cache, 'y'), isCached(cache, 'x'), isCached(cache, 'z')]).toEqual([true, true, true]);
});

test('holds 32 MiB by default', async () => {
  const cache = new ResponseCache(60_000);
  // The JSON 0 is 1 byte; a JSON string of n characters is n + 2 bytes.
  await cache.get('one byte', async () => 0);
  await cache.get('the rest', async () => 'x'.repeat(32 * 1024 * 1024 - 3));
  expect([isCached(cache, 'one byte'), isCached(cache, 'the rest')]).toEqual([true, true]);
  // One byte more: the oldest goes.
  await cache.get('another byte', async () => 1);
  expect([isCached(cache, 'one byte'), isCached(cache, 'the rest'), isCached(cache, 'another byte')]).toEqual([false, true, true]);
});
