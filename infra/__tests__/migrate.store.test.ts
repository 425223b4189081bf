// The migration lock and the idempotent backfill, against a real embedded store (chDB). chDB opens a
// data directory from one process only, so "processes started together" are two concurrent migrate
// calls in this process over one store: they race through the same engine's deduplication, which
// is what decides the lock on a ClickHouse server too (not proven here: separate sessions, network).
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, expect, it, vi } from 'vitest';
import { migrate, migrationFiles, pendingMigrations } from '../migrate.ts';
import { MigrationLock } from '../migrationLock.ts';
import { openStore, type Store } from '../store.ts';

const opened: { store: Store; dir: string }[] = [];
async function freshStore(): Promise<Store> {
  const dir = mkdtempSync(join(tmpdir(), 'mds-migrate-test-'));
  const store = await openStore({ MDS_DATA_DIR: dir, CLICKHOUSE_DATABASE: 'mds', CLICKHOUSE_URL: undefined });
  opened.push({ store, dir });
  return store;
}
afterEach(async () => {
  for (const { store, dir } of opened.splice(0)) {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

it('applies each migration once when two callers migrate one store together, and releases the lock', async () => {
  const store = await freshStore();
  const [a, b] = await Promise.all([migrate(store, { pollMs: 50 }), migrate(store, { pollMs: 50 })]);
  const recorded = await store.rows<{ name: string; n: number }>('SELECT name, count() AS n FROM schema_migrations GROUP BY name ORDER BY name');
  expect(recorded).toEqual(migrationFiles().map((name) => ({ name, n: 1 })));
  // One caller applied them all; the other waited and found them recorded.
  expect([a.length, b.length].sort((x, y) => x - y)).toEqual([0, migrationFiles().length]);
  expect(await pendingMigrations(store)).toEqual([]);
  const [lock] = await store.rows<{ expires_ms: number }>('SELECT expires_ms FROM schema_migration_lock FINAL ORDER BY generation DESC LIMIT 1');
  expect(lock!.expires_ms).toBeLessThanOrEqual(Date.now());
});

it('gives a generation of the lock to the first attempt only, even to a latecomer that read before the winner committed', async () => {
  const store = await freshStore();
  await migrate(store);
  // The race "insert, then read back" loses: B read the lock table before A's row was there, so it
  // inserts the same generation after A won it. The engine must keep A's row, and B must lose.
  const beforeA = await store.rows('SELECT generation, owner, expires_ms FROM schema_migration_lock FINAL ORDER BY generation DESC LIMIT 1');
  const first = await MigrationLock.take(store, 60_000);
  expect('lock' in first).toBe(true);
  let staleReads = 0;
  const late: Store = { ...store, rows: async (query, params) => (query.includes('ORDER BY generation DESC') && staleReads++ === 0 ? beforeA : store.rows(query, params)) as never };
  const second = await MigrationLock.take(late, 60_000);
  expect(staleReads).toBe(1);
  expect('heldBy' in second).toBe(true);
  const attempts = await store.rows<{ n: number }>('SELECT count() AS n FROM schema_migration_lock WHERE version = 0 GROUP BY generation ORDER BY generation DESC LIMIT 1');
  expect(attempts).toEqual([{ n: 1 }]);
  if ('lock' in first) {
    await first.lock.assertHeld();
    await first.lock.release();
  }
});

it('waits while another process holds the lock, and migrates once its lock expires', async () => {
  const store = await freshStore();
  await migrate(store);
  // A newer migration pending, and a live holder that never releases (a process that died).
  await store.client.command({ query: "DELETE FROM schema_migrations WHERE name = '0160_demo_history.sql'" });
  const holderExpires = Date.now() + 1_500;
  await store.insert('schema_migration_lock', [{ generation: 1000, owner: 'dead-process', expires_ms: holderExpires, version: 0 }], 'test-holder');
  const applied = await migrate(store, { pollMs: 50 });
  expect(Date.now()).toBeGreaterThanOrEqual(holderExpires);
  expect(applied).toEqual(['0160_demo_history.sql']);
});

it('stops renewing the lock once released: a process that migrated and runs on for minutes leaves it free for the next migrate', async () => {
  const store = await freshStore();
  await migrate(store);
  await store.client.command({ query: "DELETE FROM schema_migrations WHERE name = '0160_demo_history.sql'" });
  // The real store, with every write to the lock table counted and kept to be awaited (renewals are not awaited by anyone).
  const lockWrites: Promise<void>[] = [];
  const watched: Store = {
    ...store,
    insert: (table, rows, token) => {
      const done = store.insert(table, rows, token);
      if (table === 'schema_migration_lock') lockWrites.push(done.catch(() => undefined));
      return done;
    },
  };
  // The renewal timer on a clock the test moves: the lock's TTL of 60 s renews it every 20 s while held.
  vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
  try {
    expect(await migrate(watched, { lockTtlMs: 60_000 })).toEqual(['0160_demo_history.sql']);
    // Taken, then released.
    expect(lockWrites).toHaveLength(2);
    // The process lives on (the `all` role after migrating): five minutes of its timers.
    vi.advanceTimersByTime(5 * 60_000);
    await Promise.all(lockWrites);
    expect(lockWrites).toHaveLength(2);
    // A later `npm run migrate` finds the lock free at once.
    const later = await MigrationLock.take(store, 60_000);
    expect('lock' in later).toBe(true);
    if ('lock' in later) await later.lock.release();
  } finally {
    vi.useRealTimers();
  }
});

it('the market_seconds backfill (0102) fills the seconds it lacks and adds nothing when applied again', async () => {
  const store = await freshStore();
  await migrate(store);
  const ts = Date.UTC(2026, 0, 5, 12, 0, 0);
  const trades = [0, 300, 1_200, 5_000].map((dt, i) => ({
    ts: ts + dt, received_at: ts + dt, asset: 'bitcoin', venue: 'binance', market: 'BTCUSDT', quote: 'USDT', trade_id: `t${i}`, price: 100 + i, quantity: 2, side: 'buy',
  }));
  await store.insert('trades', trades);
  const totals = () => store.rows<{ trades: number; volume: number }>("SELECT sum(trade_count) AS trades, sum(volume) AS volume FROM market_seconds WHERE venue = 'binance'");
  // Fed by the view (0101): 4 trades of 2 units.
  expect(await totals()).toEqual([{ trades: 4, volume: 8 }]);
  const backfill = readFileSync(fileURLToPath(new URL('../migrations/0102_market_seconds_backfill.sql', import.meta.url)), 'utf8');
  // Applied again (a crash between the migration and its record): nothing doubles.
  await store.client.command({ query: backfill });
  expect(await totals()).toEqual([{ trades: 4, volume: 8 }]);
  // Trades stored before the view existed: the backfill fills them, once.
  await store.client.command({ query: 'TRUNCATE TABLE market_seconds' });
  await store.client.command({ query: backfill });
  await store.client.command({ query: backfill });
  expect(await totals()).toEqual([{ trades: 4, volume: 8 }]);
});

it('index_ticks_by_time (0300-0302) holds index_ticks merged, sorted by time: fed at each insert, and by the backfill for rows stored before it, the newest computation winning', async () => {
  const store = await freshStore();
  await migrate(store);
  const s = Date.UTC(2026, 0, 5, 12, 0, 0) / 1000;
  const row = (asset: string, second: number, price: number, computedMs: number, status = 'ok') => ({
    asset, second, price, status, constituents: ['v:M'], excluded: {}, volume: 1, volume_usd: price / 10, trade_count: 1, last_trade_at: second * 1000, computed_at: computedMs,
  });
  await store.insert('index_ticks', [row('bitcoin', s, 100, 1_000), row('ethereum', s, 10, 1_000), row('bitcoin', s + 1, 101, 1_000)]);
  // The second computed again: its price lost.
  await store.insert('index_ticks', [row('bitcoin', s + 1, 0, 2_000, 'none')]);
  const merged = (table: string) =>
    store.rows<{ asset: string; second: number; price: number; status: string; volume_usd: number; computed_at: number }>(
      'SELECT asset, toUnixTimestamp(second) AS second, price, status, volume_usd, toUnixTimestamp64Milli(computed_at) AS computed_at FROM {table:Identifier} FINAL ORDER BY second, asset',
      { table },
    );
  const expected = [
    { asset: 'bitcoin', second: s, price: 100, status: 'ok', volume_usd: 10, computed_at: 1_000 },
    { asset: 'ethereum', second: s, price: 10, status: 'ok', volume_usd: 1, computed_at: 1_000 },
    { asset: 'bitcoin', second: s + 1, price: 0, status: 'none', volume_usd: 0, computed_at: 2_000 },
  ];
  expect(await merged('index_ticks')).toEqual(expected);
  expect(await merged('index_ticks_by_time')).toEqual(expected);
  // Rows stored before the view existed: the backfill copies them; applied twice, FINAL still reads each once.
  const backfill = readFileSync(fileURLToPath(new URL('../migrations/0302_index_ticks_by_time_backfill.sql', import.meta.url)), 'utf8');
  await store.client.command({ query: 'TRUNCATE TABLE index_ticks_by_time' });
  await store.client.command({ query: backfill });
  await store.client.command({ query: backfill });
  expect(await merged('index_ticks_by_time')).toEqual(expected);
});
