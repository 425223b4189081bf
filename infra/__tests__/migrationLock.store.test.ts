// The migration lock on its own (infra/migrationLock.ts), against a real embedded store (chDB): the
// engine's deduplication decides each generation, so a fake store would test only the fake. The
// clock is held (Date, and the renewal's setInterval), so expiry, renewal and release are checked at
// their exact millisecond. migrate.store.test.ts tests the lock through `migrate`.
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, beforeEach, expect, it, vi } from 'vitest';
import { openTestStore } from '../../test/support/harness.ts';
import type { Logger } from '../log.ts';
import { MigrationLock, MigrationLockLostError } from '../migrationLock.ts';
import type { Store } from '../store.ts';

const table = 'schema_migration_lock';
const createTable = readFileSync(fileURLToPath(new URL('../migrations/0000_schema_migration_lock.sql', import.meta.url)), 'utf8');
/** The held clock's start: any instant; every expiry below is counted from it. */
const T = Date.UTC(2030, 0, 1);
const ttlMs = 30_000;

let store: Store;
let dispose: () => Promise<void>;
beforeAll(async () => {
  ({ store, dispose } = await openTestStore());
});
afterAll(() => dispose());

/** An empty lock table, with no deduplication tokens remembered from the last one. */
async function emptyLockTable(): Promise<void> {
  await store.client.command({ query: `DROP TABLE IF EXISTS ${table} SYNC` });
  await store.client.command({ query: createTable });
}

beforeEach(async () => {
  await emptyLockTable();
  vi.useFakeTimers({ toFake: ['Date', 'setInterval', 'clearInterval'] });
  vi.setSystemTime(T);
});
afterEach(() => {
  vi.useRealTimers();
});

interface StoredRow {
  generation: number;
  owner: string;
  expires_ms: number;
  version: number;
}

/** Every generation as the lock reads it (the highest version of each). */
const generations = () => store.rows<StoredRow>(`SELECT generation, owner, expires_ms, version FROM ${table} FINAL ORDER BY generation`);

/** Another process's row, inserted as its take would (the token of its generation). */
const otherHolder = (generation: number, owner: string, expiresMs: number) =>
  store.insert(table, [{ generation, owner, expires_ms: expiresMs, version: 0 }], `${table}:${generation}`);

/** The store with every write to the lock table kept to be awaited (renewals are awaited by no one). */
function watched(base: Store = store) {
  const writes: Promise<unknown>[] = [];
  const watchedStore: Store = {
    ...base,
    insert: (into, rows, token) => {
      const done = base.insert(into, rows, token);
      if (into === table) writes.push(done.catch(() => undefined));
      return done;
    },
  };
  return { store: watchedStore, writes, settled: () => Promise.all(writes) };
}

/** Takes the lock, which the test expects to be free. */
async function taken(from: Store = store, log?: Logger): Promise<MigrationLock> {
  const result = await MigrationLock.take(from, ttlMs, log);
  if (!('lock' in result)) throw new Error(`expected the lock, held by ${result.heldBy}`);
  return result.lock;
}

/** An owner this process wrote: its host, its pid and 8 hex digits of a random UUID. */
const thisProcess = new RegExp(`^${hostname().replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:${process.pid}:[0-9a-f]{8}$`);

it('takes a free lock as generation 1, owned by this process (host, pid, 8 random hex digits), for one TTL from now', async () => {
  const lock = await taken();
  const rows = await generations();
  expect(rows).toEqual([{ generation: 1, owner: expect.stringMatching(thisProcess), expires_ms: T + ttlMs, version: 0 }]);
  await lock.release();
});

it('takes the generation after the newest once its holder has expired, at the exact millisecond of its expiry', async () => {
  await otherHolder(7, 'dead-host:1:deadbeef', T);
  const lock = await taken();
  const rows = await generations();
  expect(rows.map((r) => [r.generation, r.expires_ms])).toEqual([[7, T], [8, T + ttlMs]]);
  expect(rows[1]!.owner).toMatch(thisProcess);
  await lock.assertHeld();
  await lock.release();
});

it("refuses while another process's generation is unexpired, saying who holds it and for how long, to its last millisecond", async () => {
  await otherHolder(3, 'other-host:42:0badf00d', T + 5_000);
  expect(await MigrationLock.take(store, ttlMs)).toEqual({ heldBy: 'other-host:42:0badf00d', expiresInMs: 5_000 });
  vi.setSystemTime(T + 4_999);
  expect(await MigrationLock.take(store, ttlMs)).toEqual({ heldBy: 'other-host:42:0badf00d', expiresInMs: 1 });
  // Refusals write nothing.
  expect(await generations()).toEqual([{ generation: 3, owner: 'other-host:42:0badf00d', expires_ms: T + 5_000, version: 0 }]);
});

it('gives one of two takes at once the lock, and tells the other who took it and that it has a whole TTL left', async () => {
  const [a, b] = await Promise.all([MigrationLock.take(store, ttlMs), MigrationLock.take(store, ttlMs)]);
  const locks = [a, b].filter((r) => 'lock' in r);
  expect(locks).toHaveLength(1);
  const [row] = await generations();
  expect(row!.generation).toBe(1);
  expect([a, b].find((r) => 'heldBy' in r)).toEqual({ heldBy: row!.owner, expiresInMs: ttlMs });
  await locks[0]!.lock.release();
});

it('loses a generation another process inserted first, though it read the table before that row was there', async () => {
  // The winner's row is in; this take's read of the newest generation is stale (the table looked empty).
  await otherHolder(1, 'winner-host:7:12345678', T + 20_000);
  const stale: Store = { ...store, rows: async (query, params) => (query.includes('ORDER BY generation DESC') ? [] : store.rows(query, params)) as never };
  expect(await MigrationLock.take(stale, ttlMs)).toEqual({ heldBy: 'winner-host:7:12345678', expiresInMs: 20_000 });
  // The engine kept the winner's row only.
  expect(await generations()).toEqual([{ generation: 1, owner: 'winner-host:7:12345678', expires_ms: T + 20_000, version: 0 }]);
});

it('refuses when its own generation cannot be read back (a replica behind): held by another process, for all it knows', async () => {
  const behind: Store = { ...store, rows: async (query, params) => (query.includes('WHERE generation =') ? [] : store.rows(query, params)) as never };
  expect(await MigrationLock.take(behind, ttlMs)).toEqual({ heldBy: 'another process', expiresInMs: 0 });
});

it('is held until the millisecond before its expiry, and lost at it, with the generation and owner in the error', async () => {
  const lock = await taken();
  const [{ owner }] = (await generations()) as [StoredRow];
  vi.setSystemTime(T + ttlMs - 1);
  await lock.assertHeld();
  vi.setSystemTime(T + ttlMs);
  const lost = await lock.assertHeld().then(() => undefined, (err: unknown) => err);
  expect(lost).toBeInstanceOf(MigrationLockLostError);
  expect(lost).toMatchObject({ name: 'MigrationLockLostError', message: `lost the migration lock (generation 1, ${owner}) before finishing` });
  await lock.release();
});

it('is lost once a newer generation exists, once another owner holds its generation, and once its rows are gone', async () => {
  const lock = await taken();
  // Another process took the next generation (after this one had expired, say).
  await otherHolder(2, 'next-host:1:aaaaaaaa', T + ttlMs);
  await expect(lock.assertHeld()).rejects.toThrow(MigrationLockLostError);

  // Its own generation, but another owner's row replaced it (a higher version), unexpired.
  await emptyLockTable();
  const again = await taken();
  await store.insert(table, [{ generation: 1, owner: 'intruder:1:bbbbbbbb', expires_ms: T + ttlMs, version: 5 }], 'test-intruder');
  await expect(again.assertHeld()).rejects.toThrow(MigrationLockLostError);

  // The table emptied under it.
  await store.client.command({ query: `TRUNCATE TABLE ${table}` });
  await expect(again.assertHeld()).rejects.toThrow(MigrationLockLostError);
  await lock.release();
  await again.release();
});

it('renews every third of its TTL to one TTL past the renewal, each renewal a higher version, and is held past its first expiry', async () => {
  const lockWrites = watched();
  const lock = await taken(lockWrites.store);
  expect(lockWrites.writes).toHaveLength(1);
  vi.advanceTimersByTime(ttlMs / 3 - 1);
  expect(lockWrites.writes).toHaveLength(1);
  vi.advanceTimersByTime(1);
  expect(lockWrites.writes).toHaveLength(2);
  await lockWrites.settled();
  expect(await generations()).toEqual([{ generation: 1, owner: expect.stringMatching(thisProcess), expires_ms: T + 10_000 + ttlMs, version: 1 }]);
  vi.advanceTimersByTime(ttlMs / 3);
  expect(lockWrites.writes).toHaveLength(3);
  await lockWrites.settled();
  expect(await generations()).toMatchObject([{ generation: 1, expires_ms: T + 20_000 + ttlMs, version: 2 }]);
  // Past the expiry it was taken with (T + 30 s), to the millisecond before the last renewal's.
  vi.setSystemTime(T + 20_000 + ttlMs - 1);
  await lock.assertHeld();
  await lock.release();
});

it('logs a renewal the store refused, with its error, and keeps renewing', async () => {
  const refusal = new Error('store unavailable');
  let refuse = false;
  const flaky: Store = { ...store, insert: (into, rows, token) => (refuse ? Promise.reject(refusal) : store.insert(into, rows, token)) };
  const lockWrites = watched(flaky);
  const warn = vi.fn();
  const lock = await taken(lockWrites.store, { warn } as unknown as Logger);
  refuse = true;
  vi.advanceTimersByTime(ttlMs / 3);
  await lockWrites.settled();
  await vi.waitFor(() => expect(warn).toHaveBeenCalledTimes(1));
  expect(warn).toHaveBeenCalledWith({ err: refusal }, 'migration lock not renewed');
  refuse = false;
  vi.advanceTimersByTime(ttlMs / 3);
  await lockWrites.settled();
  expect(await generations()).toMatchObject([{ expires_ms: T + 20_000 + ttlMs }]);
  await lock.release();
});

it('drops a refused renewal when it has no logger, rather than leave it an unhandled rejection', async () => {
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown) => unhandled.push(reason);
  process.on('unhandledRejection', onUnhandled);
  try {
    let refuse = false;
    const flaky: Store = { ...store, insert: (into, rows, token) => (refuse ? Promise.reject(new Error('store unavailable')) : store.insert(into, rows, token)) };
    const lockWrites = watched(flaky);
    const lock = await taken(lockWrites.store);
    refuse = true;
    vi.advanceTimersByTime(ttlMs / 3);
    expect(lockWrites.writes).toHaveLength(2);
    await lockWrites.settled();
    // Node reports an unhandled rejection once the microtasks of its turn have run.
    await new Promise((resolve) => setImmediate(resolve));
    await new Promise((resolve) => setImmediate(resolve));
    expect(unhandled).toEqual([]);
    refuse = false;
    await lock.release();
  } finally {
    process.off('unhandledRejection', onUnhandled);
  }
});

it('release sets its expiry to now, so it is no longer held and another take gets the next generation at once', async () => {
  const lockWrites = watched();
  const lock = await taken(lockWrites.store);
  vi.setSystemTime(T + 5_000);
  await lock.release();
  expect(await generations()).toMatchObject([{ generation: 1, expires_ms: T + 5_000, version: 1 }]);
  await expect(lock.assertHeld()).rejects.toThrow(MigrationLockLostError);
  const next = await taken();
  expect((await generations()).map((r) => [r.generation, r.expires_ms])).toEqual([[1, T + 5_000], [2, T + 5_000 + ttlMs]]);
  await next.release();
  // Released: no renewal comes any more.
  const before = lockWrites.writes.length;
  vi.advanceTimersByTime(5 * ttlMs);
  expect(lockWrites.writes).toHaveLength(before);
});

it('does not keep the process alive: its renewal timer is unreferenced', async () => {
  vi.useRealTimers();
  const intervals = vi.spyOn(globalThis, 'setInterval');
  try {
    const lock = await taken();
    const renewal = intervals.mock.results.at(-1)!.value as NodeJS.Timeout;
    expect(renewal.hasRef()).toBe(false);
    await lock.release();
  } finally {
    intervals.mockRestore();
  }
});
