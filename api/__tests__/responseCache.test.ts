import { afterEach, expect, test, vi } from 'vitest';
import { ResponseCache } from '../responseCache.ts';

afterEach(() => vi.useRealTimers());

const bodyOf = async (got: ReturnType<ResponseCache['get']>) => JSON.parse((await got).body.toString()) as unknown;

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
  expect(await bodyOf(first)).toEqual({ v: 1 });
  // Within the interval: the same entry, no build.
  vi.setSystemTime(1_004_999);
  expect(cache.get('k', build)).not.toBeInstanceOf(Promise);
  expect(build).toHaveBeenCalledTimes(1);

  // Expired, within one more interval: the old body at once, one rebuild for any number of requests.
  vi.setSystemTime(1_006_000);
  expect(await bodyOf(cache.get('k', build))).toEqual({ v: 1 });
  expect(await bodyOf(cache.get('k', build))).toEqual({ v: 1 });
  expect(build).toHaveBeenCalledTimes(2);
  release();
  await vi.waitFor(async () => expect(await bodyOf(cache.get('k', build))).toEqual({ v: 2 }));
  expect(build).toHaveBeenCalledTimes(2);

  // Past the stale interval too (vi.waitFor moved the fake clock a little): the request waits for the new body.
  vi.setSystemTime(1_030_000);
  const late = cache.get('k', build);
  expect(late).toBeInstanceOf(Promise);
  release();
  expect(await bodyOf(late)).toEqual({ v: 3 });
});

test('a failed rebuild keeps the stale body until its interval ends, then the failure reaches the caller', async () => {
  vi.useFakeTimers({ toFake: ['Date'], now: 0 });
  const cache = new ResponseCache(1_000);
  await cache.get('k', async () => ({ ok: true }));
  const failing = vi.fn(async () => {
    throw new Error('store down');
  });
  vi.setSystemTime(1_500);
  expect(await bodyOf(cache.get('k', failing))).toEqual({ ok: true });
  await vi.waitFor(() => expect(failing).toHaveBeenCalledTimes(1));
  vi.setSystemTime(2_001);
  await expect(cache.get('k', failing)).rejects.toThrow('store down');
});
