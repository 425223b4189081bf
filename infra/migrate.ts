import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from './log.ts';
import { MigrationLock } from './migrationLock.ts';
import type { Store } from './store.ts';

const migrationsDir = fileURLToPath(new URL('./migrations/', import.meta.url));

/** Migration files in the order they apply: `NNNN_name.sql`, one statement each. */
export function migrationFiles(): string[] {
  return readdirSync(migrationsDir)
    .filter((f) => /^\d{4}_[a-z0-9_]+\.sql$/.test(f))
    .sort();
}

/** The `0000_` files create the tables migrating needs (its record, its lock): run before any lock, every time. */
const isBootstrap = (file: string) => file.startsWith('0000_');

async function apply(store: Store, file: string): Promise<void> {
  // chDB keeps settings on its shared session: a deduplication token of an earlier insert must not apply to a backfill.
  await store.client.command({ query: readFileSync(migrationsDir + file, 'utf8'), clickhouse_settings: { insert_deduplication_token: '' } });
}

/** The migration files not recorded in `schema_migrations` (all of them on an empty store). */
export async function pendingMigrations(store: Store): Promise<string[]> {
  const [record] = await store.rows<{ n: number }>("SELECT count() AS n FROM system.tables WHERE database = currentDatabase() AND name = 'schema_migrations'");
  const applied = new Set(record?.n ? (await store.rows<{ name: string }>('SELECT name FROM schema_migrations')).map((r) => r.name) : []);
  return migrationFiles().filter((f) => !applied.has(f));
}

/** A role that does not migrate, started on a store whose schema is older than its code. */
export class SchemaBehindError extends Error {
  override name = 'SchemaBehindError';
  constructor(pending: readonly string[]) {
    super(`the store's schema is behind this version (${pending.length} migration${pending.length === 1 ? '' : 's'} not applied, from ${pending[0]}): run \`npm run migrate\` first`);
  }
}

export interface MigrateOptions {
  log?: Logger;
  /** Life of the lock without renewal (ms): how long others wait for a holder that died. */
  lockTtlMs?: number;
  /** How often a process waiting for the lock looks again (ms). */
  pollMs?: number;
}

/**
 * Applies the migrations not yet recorded in `schema_migrations`, in file order, under the
 * migration lock (infra/migrationLock.ts): of processes started together, one applies them and the
 * others wait, then find them recorded. Returns the files this call applied.
 */
export async function migrate(store: Store, { log, lockTtlMs = 60_000, pollMs = 1_000 }: MigrateOptions = {}): Promise<string[]> {
  for (const file of migrationFiles().filter(isBootstrap)) await apply(store, file);
  let lastWaitLog = 0;
  for (;;) {
    if ((await pendingMigrations(store)).length === 0) return [];
    const taken = await MigrationLock.take(store, lockTtlMs, log);
    if ('heldBy' in taken) {
      if (Date.now() - lastWaitLog >= 30_000) {
        log?.info({ holder: taken.heldBy, expiresInS: Math.ceil(taken.expiresInMs / 1000) }, 'waiting for the migration lock');
        lastWaitLog = Date.now();
      }
      await sleep(pollMs);
      continue;
    }
    const { lock } = taken;
    try {
      // Read again under the lock: the previous holder may have applied some of them.
      const pending = await pendingMigrations(store);
      for (const [i, file] of pending.entries()) {
        await lock.assertHeld();
        log?.debug({ migration: file, step: `${i + 1}/${pending.length}` }, 'applying migration');
        await apply(store, file);
        await store.insert('schema_migrations', [{ name: file, applied_at: Date.now() }]);
      }
      return pending;
    } finally {
      await lock.release();
    }
  }
}
