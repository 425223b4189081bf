// Store deadlines and the fault wrapper, against a real embedded store (chDB).
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate } from '../migrate.ts';
import { openStore, StoreTimeoutError, type Store } from '../store.ts';
import { StoreFaultError, withStoreFaults } from '../storeFaults.ts';
import { until } from '../../test/support/until.ts';

// Long enough for a plain query on a loaded machine (the suite runs three files at once), short for a test.
const queryTimeoutMs = 1_000;
const insertTimeoutMs = 1_200;
let dir: string;
let store: Store;

beforeAll(async () => {
  dir = join(mkdtempSync(join(tmpdir(), 'mds-store-test-')), 'data');
  store = await openStore({ MDS_DATA_DIR: dir, CLICKHOUSE_DATABASE: 'mds', CLICKHOUSE_URL: undefined }, { queryTimeoutMs, insertTimeoutMs });
  await migrate(store);
});
afterAll(async () => {
  await store?.close();
  rmSync(dirname(dir), { recursive: true, force: true });
});

it('makes the data directory it creates the owner\'s alone (it holds the key table; it was 0755)', () => {
  expect(statSync(dir).mode & 0o777).toBe(0o700);
});

/** How long a promise took to reject, and with what. */
async function rejection(call: Promise<unknown>): Promise<{ error: unknown; ms: number }> {
  const started = performance.now();
  try {
    await call;
  } catch (error) {
    return { error, ms: performance.now() - started };
  }
  throw new Error('expected a rejection');
}

describe('openStore deadlines', () => {
  it('gives a query that runs past its deadline a StoreTimeoutError at the deadline, and later queries their own answers', async () => {
    // sleep(2) keeps chDB busy for 2 s; it cannot be interrupted, only left behind.
    const { error, ms } = await rejection(store.rows('SELECT sleep(2) AS s, {x:UInt8} AS x', { x: 1 }));
    expect(error).toBeInstanceOf(StoreTimeoutError);
    expect(error).toMatchObject({ operation: 'query', timeoutMs: queryTimeoutMs });
    expect(ms).toBeGreaterThanOrEqual(queryTimeoutMs - 5);
    expect(ms).toBeLessThan(queryTimeoutMs + 700);

    // chDB runs parameterised queries one at a time: once the abandoned one has finished (a query
    // answers within its deadline again), the next query gets its own values back, not the abandoned
    // query's parameters or result.
    await until(async () => (await store.rows('SELECT 1 AS one').catch(() => [])).length === 1, 'the abandoned query to finish', { everyMs: 100 });
    expect(await store.rows('SELECT {x:UInt8} AS x, {s:String} AS s', { x: 2, s: 'next' })).toEqual([{ x: 2, s: 'next' }]);
    await store.insert('api_keys', [{ key_hash: 'a'.repeat(64), prefix: 'deadline-tes', name: 'after', created_at: Date.now(), revoked_at: null, version: 1 }]);
    expect(await store.rows('SELECT name FROM api_keys FINAL WHERE prefix = {p:String}', { p: 'deadline-tes' })).toEqual([{ name: 'after' }]);
  });
});

describe('withStoreFaults around the real store', () => {
  it('a hung call fails at the deadline with StoreTimeoutError, and the next call works', async () => {
    const faults = withStoreFaults(store, { queryTimeoutMs, insertTimeoutMs });
    faults.set('hang');
    const query = await rejection(faults.store.rows('SELECT 1 AS one'));
    expect(query.error).toBeInstanceOf(StoreTimeoutError);
    expect(query.ms).toBeGreaterThanOrEqual(queryTimeoutMs - 5);
    expect(query.ms).toBeLessThan(queryTimeoutMs + 500);
    const insert = await rejection(faults.store.insert('api_keys', [{ key_hash: 'b'.repeat(64), prefix: 'hung-insert', name: 'x', created_at: 0, revoked_at: null, version: 1 }]));
    expect(insert.error).toMatchObject({ name: 'StoreTimeoutError', operation: 'insert', timeoutMs: insertTimeoutMs });
    expect(insert.ms).toBeGreaterThanOrEqual(insertTimeoutMs - 5);

    faults.set('ok');
    expect(await faults.store.rows('SELECT {x:UInt8} AS x', { x: 7 })).toEqual([{ x: 7 }]);
    // The hung insert never reached the engine.
    expect(await store.rows("SELECT count() AS n FROM api_keys WHERE prefix = 'hung-insert'")).toEqual([{ n: 0 }]);
    expect(faults.calls()).toEqual({ queries: 2, inserts: 1 });
  });

  it('fails queries, inserts or both, and delays calls by slowMs', async () => {
    const faults = withStoreFaults(store, { queryTimeoutMs: 5_000, insertTimeoutMs: 5_000 });
    const row = (name: string) => [{ key_hash: name.padEnd(64, '0'), prefix: 'faults-test', name, created_at: 0, revoked_at: null, version: 1 }];
    const count = async () => (await store.rows<{ n: number }>("SELECT count() AS n FROM api_keys WHERE prefix = 'faults-test'"))[0]!.n;

    faults.set('failquery');
    await expect(faults.store.rows('SELECT 1')).rejects.toBeInstanceOf(StoreFaultError);
    await faults.store.insert('api_keys', row('q'));
    expect(await count()).toBe(1);

    faults.set('failinsert');
    await expect(faults.store.insert('api_keys', row('i'))).rejects.toBeInstanceOf(StoreFaultError);
    expect(await faults.store.rows('SELECT 1 AS one')).toEqual([{ one: 1 }]);
    expect(await count()).toBe(1);

    faults.set('fail');
    await expect(faults.store.rows('SELECT 1')).rejects.toBeInstanceOf(StoreFaultError);
    await expect(faults.store.insert('api_keys', row('f'))).rejects.toBeInstanceOf(StoreFaultError);

    faults.set({ slowMs: 300 });
    expect(faults.current()).toEqual({ slowMs: 300 });
    const started = performance.now();
    expect(await faults.store.rows('SELECT 1 AS one')).toEqual([{ one: 1 }]);
    // Timers start from the event loop's cached clock, a few ms behind performance.now() on a busy loop.
    expect(performance.now() - started).toBeGreaterThanOrEqual(280);
  });
});

describe('openStore insert', () => {
  it('writes each value under its own column, whatever the key order of each row, and a column a row lacks takes its default', async () => {
    const prefix = 'insert-cols';
    // Keys in another order than the table's and than each other's; the first row without
    // revoked_at and version (Nullable: NULL; version: its default), which the second has.
    await store.insert('api_keys', [
      { key_hash: 'c'.repeat(64), prefix: `${prefix}-2`, created_at: 1_700_000_001_000, name: 'second' },
      { version: 3, name: 'first', revoked_at: 1_700_000_000_123, created_at: 1_700_000_000_000, prefix: `${prefix}-1`, key_hash: 'b'.repeat(64) },
    ]);
    const rows = await store.rows(
      `SELECT key_hash, prefix, name, toUnixTimestamp64Milli(created_at) AS created, toUnixTimestamp64Milli(revoked_at) AS revoked, version
       FROM api_keys FINAL WHERE startsWith(prefix, {p:String}) ORDER BY prefix`,
      { p: prefix },
    );
    expect(rows).toEqual([
      { key_hash: 'b'.repeat(64), prefix: `${prefix}-1`, name: 'first', created: 1_700_000_000_000, revoked: 1_700_000_000_123, version: 3 },
      { key_hash: 'c'.repeat(64), prefix: `${prefix}-2`, name: 'second', created: 1_700_000_001_000, revoked: null, version: 0 },
    ]);
  });
});
