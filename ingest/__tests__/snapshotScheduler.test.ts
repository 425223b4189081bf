// The snapshot scheduler's rules, checked directly with vitest's fake clock: REST snapshots a few at a
// time, each market queued once, markets that no longer want one skipped, a fetch that left its market
// unsynced holding its slot for a pause and queueing it again; resubscriptions at most every 10 s per market until the snapshot comes.
import { afterEach, beforeEach, describe, expect, test, vi } from 'vitest';
import { createLogger } from '../../infra/log.ts';
import { refetchPauseMs, ResubscribeThrottle, resubscribeEveryMs, RestSnapshotQueue } from '../snapshotScheduler.ts';

beforeEach(() => void vi.useFakeTimers());
afterEach(() => void vi.useRealTimers());

/** A queue whose fetches wait until the test settles them; `wanted` says which markets want a snapshot. */
function queue(concurrency: number, wanted = new Set(['A', 'B', 'C', 'D', 'E'])) {
  const pending = new Map<string, { resolve: () => void; reject: (err: Error) => void }>();
  const started: string[] = [];
  let stopped = false;
  const q = new RestSnapshotQueue({
    concurrency,
    wants: (symbol) => wanted.has(symbol),
    fetch: (symbol) =>
      new Promise<void>((resolve, reject) => {
        started.push(symbol);
        pending.set(symbol, { resolve, reject });
      }),
    stopped: () => stopped,
    log: createLogger('silent'),
  });
  /**
   * Settles a fetch and lets the queue react: 'synced' applied the snapshot, 'behind' fetched one older
   * than the buffered updates (the market still wants one), 'fail' threw.
   */
  const settle = async (symbol: string, outcome: 'synced' | 'behind' | 'fail' = 'synced') => {
    const p = pending.get(symbol)!;
    pending.delete(symbol);
    if (outcome === 'synced') wanted.delete(symbol);
    if (outcome === 'fail') p.reject(new Error('HTTP 429'));
    else p.resolve();
    await vi.advanceTimersByTimeAsync(0);
  };
  return { q, started, wanted, settle, stop: () => (stopped = true) };
}

describe('RestSnapshotQueue', () => {
  test('at most `concurrency` fetches at once, the rest in the order asked; a finished fetch starts the next', async () => {
    const { q, started, settle } = queue(2);
    q.request(['A', 'B', 'C']);
    q.request(['D']);
    expect(started).toEqual(['A', 'B']);
    expect(q.fetching).toEqual(['A', 'B']);
    expect(q.queued).toEqual(['C', 'D']);
    await settle('B');
    expect(started).toEqual(['A', 'B', 'C']);
    await settle('A');
    await settle('C');
    await settle('D');
    expect(started).toEqual(['A', 'B', 'C', 'D']);
    expect([q.fetching, q.queued]).toEqual([[], []]);
  });

  test('a market queued or being fetched is not queued again', async () => {
    const { q, started, wanted, settle } = queue(1);
    q.request(['A', 'B', 'A']);
    q.request(['B', 'A']);
    expect(q.queued).toEqual(['B']);
    await settle('A');
    await settle('B');
    expect(started).toEqual(['A', 'B']);
    // Once synced, a market may be asked for again (a gap made it want a snapshot again).
    wanted.add('A');
    q.request(['A']);
    expect(started).toEqual(['A', 'B', 'A']);
  });

  test('markets that do not want a snapshot are not queued; one that stops wanting it while queued (synced, delisted) is skipped', async () => {
    const { q, started, wanted, settle } = queue(1);
    q.request(['A', 'Z', 'B', 'C']);
    expect(q.queued).toEqual(['B', 'C']);
    wanted.delete('B');
    await settle('A');
    expect(started).toEqual(['A', 'C']);
    expect(q.queued).toEqual([]);
  });

  test('a failed fetch keeps its slot for the pause, then the next starts and the market is queued again behind it', async () => {
    const { q, started, settle } = queue(1);
    q.request(['A', 'B']);
    await settle('A', 'fail');
    await vi.advanceTimersByTimeAsync(refetchPauseMs - 1);
    expect(started).toEqual(['A']);
    // Asked again during the pause: A is still being fetched.
    q.request(['A']);
    expect(q.queued).toEqual(['B']);
    await vi.advanceTimersByTimeAsync(1);
    expect(started).toEqual(['A', 'B']);
    expect(q.queued).toEqual(['A']);
    await settle('B');
    expect(started).toEqual(['A', 'B', 'A']);
    await settle('A');
    expect([q.fetching, q.queued]).toEqual([[], []]);
  });

  test('a snapshot older than the buffered updates: the market is fetched again after the pause, with no further request', async () => {
    const { q, started, settle } = queue(2);
    q.request(['A']);
    await settle('A', 'behind');
    await vi.advanceTimersByTimeAsync(refetchPauseMs - 1);
    expect(started).toEqual(['A']);
    await vi.advanceTimersByTimeAsync(1);
    expect(started).toEqual(['A', 'A']);
    await settle('A');
    await vi.advanceTimersByTimeAsync(refetchPauseMs * 5);
    expect(started).toEqual(['A', 'A']);
    expect([q.fetching, q.queued]).toEqual([[], []]);
  });

  test('a market that stopped wanting a snapshot during a failed fetch (delisted) is not fetched again', async () => {
    const { q, started, wanted, settle } = queue(1);
    q.request(['A']);
    wanted.delete('A');
    await settle('A', 'fail');
    await vi.advanceTimersByTimeAsync(refetchPauseMs * 5);
    expect(started).toEqual(['A']);
    expect([q.fetching, q.queued]).toEqual([[], []]);
  });

  test('nothing starts once the collector stopped, not even a market left unsynced', async () => {
    const { q, started, settle, stop } = queue(1);
    q.request(['A', 'B']);
    stop();
    await settle('A', 'behind');
    await vi.advanceTimersByTimeAsync(refetchPauseMs * 5);
    q.request(['C']);
    expect(started).toEqual(['A']);
  });
});

describe('ResubscribeThrottle', () => {
  test('a market is resubscribed at once, then not again for 10 s; each market on its own clock', () => {
    const throttle = new ResubscribeThrottle();
    const t0 = 1_000_000;
    expect(throttle.take(['A', 'B'], t0)).toEqual(['A', 'B']);
    expect(throttle.take(['A', 'B'], t0 + resubscribeEveryMs - 1)).toEqual([]);
    expect(throttle.take(['C', 'A'], t0 + resubscribeEveryMs - 1)).toEqual(['C']);
    expect(throttle.take(['A', 'B', 'C'], t0 + resubscribeEveryMs)).toEqual(['A', 'B']);
    expect(resubscribeEveryMs).toBe(10_000);
  });

  test('a (re)subscription counts as asking; a snapshot that came lets the next request go at once', () => {
    const throttle = new ResubscribeThrottle();
    const t0 = 5_000_000;
    throttle.subscribed(['A', 'B'], t0);
    expect(throttle.take(['A', 'B'], t0 + 9_999)).toEqual([]);
    throttle.answered('A');
    expect(throttle.take(['A', 'B'], t0 + 9_999)).toEqual(['A']);
    expect(throttle.take(['B'], t0 + 10_000)).toEqual(['B']);
  });

  test('the clock defaults to now', () => {
    vi.setSystemTime(2_000_000);
    const throttle = new ResubscribeThrottle();
    throttle.subscribed(['A']);
    vi.setSystemTime(2_000_000 + 9_999);
    expect(throttle.take(['A'])).toEqual([]);
    vi.setSystemTime(2_000_000 + 10_000);
    expect(throttle.take(['A'])).toEqual(['A']);
  });
});
