import { afterAll, afterEach, beforeAll, expect, test, vi } from 'vitest';
import type { Store, StoreCalls } from '../../infra/store.ts';
import { withStoreFaults } from '../../infra/storeFaults.ts';
import { sharedAssetMarkets, stopSharedAssetMarkets } from '../read/assetMarket.ts';
import { openTestStore, trade } from '../../test/support/harness.ts';

let env: Awaited<ReturnType<typeof openTestStore>>;
const rule = { staleAfterMs: 60_000, minFreeBytes: 0 };

beforeAll(async () => {
  env = await openTestStore();
  const ts = Date.now() - 60_000;
  await env.store.insert('trades', [trade({ venue: 'binance', market: 'BTCUSDT', asset: 'bitcoin', quote: 'USDT', trade_id: '1', ts, price: 100_000, quantity: 1 })]);
});
afterAll(() => env?.dispose());
afterEach(() => vi.useRealTimers());

/**
 * The test store through the project's fault wrapper (it counts the queries and can fail them), with
 * `settled`: waits until no query is running and no new one starts.
 */
function counted(store: Store) {
  const faults = withStoreFaults(store);
  const running = new Set<Promise<unknown>>();
  const calls: StoreCalls = {
    rows<T>(query: string, params?: Record<string, unknown>) {
      const answer = faults.store.rows<T>(query, params);
      const tracked = answer.catch(() => {});
      running.add(tracked);
      void tracked.then(() => running.delete(tracked));
      return answer;
    },
    insert: (table, rows, token) => faults.store.insert(table, rows, token),
  };
  const queries = () => faults.calls().queries;
  const settled = async () => {
    for (let quiet = 0; quiet < 3; ) {
      const before = queries();
      await Promise.all(running);
      await new Promise((resolve) => setImmediate(resolve));
      quiet = queries() === before && running.size === 0 ? quiet + 1 : 0;
    }
  };
  return { calls, queries, fail: (failing: boolean) => faults.set(failing ? 'fail' : 'ok'), settled };
}

const hourMs = 3_600_000;
/**
 * Fake Date and timeouts only: the store's own I/O runs for real. Ten minutes into an hour: a test
 * stays in one hour, whose first build alone reads the long windows (api/read/assetLongWindows.ts).
 */
const fakeClock = () => {
  vi.useFakeTimers({ toFake: ['Date', 'setTimeout', 'clearTimeout'] });
  vi.setSystemTime(Math.floor(Date.now() / hourMs) * hourMs + 10 * 60_000);
};

test('one snapshot for 5 s; then built ahead while asked, the previous one answering until its successor is complete', async () => {
  fakeClock();
  const store = counted(env.store);
  const t0 = Date.now();
  const first = await sharedAssetMarkets(store.calls, rule);
  expect(first.at).toBe(t0);
  expect(first.markets.find((m) => m.asset.id === 'bitcoin')?.observedSince).not.toBeNull();
  await store.settled();
  const oneBuild = store.queries();
  expect(oneBuild).toBeGreaterThan(1);
  // The hour's later builds read its long windows no more.
  const laterBuild = oneBuild - 1;

  vi.advanceTimersByTime(4_999);
  expect(await sharedAssetMarkets(store.calls, rule)).toBe(first);
  await store.settled();
  expect(store.queries()).toBe(oneBuild);

  // 5 s old: its successor is built without a request; meanwhile the first one answers at once.
  vi.advanceTimersByTime(1);
  expect(await sharedAssetMarkets(store.calls, rule)).toBe(first);
  await store.settled();
  expect(store.queries()).toBe(oneBuild + laterBuild);
  const second = await sharedAssetMarkets(store.calls, rule);
  expect(second.at).toBe(t0 + 5_000);
  expect(store.queries()).toBe(oneBuild + laterBuild);
  stopSharedAssetMarkets(store.calls);
});

test('builds ahead for a minute after the last request only; an older snapshot is not served, the request waits for a new one', async () => {
  fakeClock();
  const store = counted(env.store);
  await sharedAssetMarkets(store.calls, rule);
  const askedAt = Date.now();
  await store.settled();
  const oneBuild = store.queries();
  // One build every 5 s while the last request is at most 60 s old, then none; after the first, without the hour's long windows.
  while (Date.now() < askedAt + 90_000) {
    vi.advanceTimersByTime(5_000);
    await store.settled();
  }
  expect(store.queries()).toBe(oneBuild + 12 * (oneBuild - 1));
  const asked = Date.now();
  const fresh = await sharedAssetMarkets(store.calls, rule);
  expect(fresh.at).toBe(asked);
  stopSharedAssetMarkets(store.calls);
});

test('a failed build is not kept and stops the builds ahead; the previous snapshot answers for up to 10 s, then the failure shows', async () => {
  fakeClock();
  const store = counted(env.store);
  const first = await sharedAssetMarkets(store.calls, rule);
  await store.settled();
  const oneBuild = store.queries();
  store.fail(true);
  vi.advanceTimersByTime(5_000);
  await store.settled();
  const failedAhead = store.queries();
  expect(failedAhead).toBeGreaterThan(oneBuild);
  // 9 s old: still answered, and the request starts a build of its own (which fails too).
  vi.advanceTimersByTime(4_000);
  expect(await sharedAssetMarkets(store.calls, rule)).toBe(first);
  await store.settled();
  const failedAsked = store.queries();
  expect(failedAsked).toBeGreaterThan(failedAhead);
  // No build ahead after a failure, though the last request is recent.
  for (let i = 0; i < 4; i++) {
    vi.advanceTimersByTime(5_000);
    await store.settled();
  }
  expect(store.queries()).toBe(failedAsked);
  // Past 10 s old, the failure shows.
  await expect(sharedAssetMarkets(store.calls, rule)).rejects.toThrow('injected store fault: fail');
  store.fail(false);
  const asked = Date.now();
  expect((await sharedAssetMarkets(store.calls, rule)).at).toBe(asked);
  stopSharedAssetMarkets(store.calls);
});

test('nothing is built ahead once the API stops them (its store is closed next)', async () => {
  fakeClock();
  const store = counted(env.store);
  await sharedAssetMarkets(store.calls, rule);
  await store.settled();
  const before = store.queries();
  stopSharedAssetMarkets(store.calls);
  vi.advanceTimersByTime(30_000);
  await store.settled();
  expect(store.queries()).toBe(before);
});
