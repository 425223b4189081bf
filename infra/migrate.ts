import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Store } from './store.ts';

const migrationsDir = fileURLToPath(new URL('./migrations/', import.meta.url));

/** Migration files in the order they apply: `NNNN_name.sql`, one statement each. */
export function migrationFiles(): string[] {
  return readdirSync(migrationsDir)
    .filter((f) => /^\d{4}_[a-z0-9_]+\.sql$/.test(f))
    .sort();
}

/**
 * Applies the migrations not yet recorded in `schema_migrations`, in file order. Safe to run
 * at every start and from several processes: each statement is `IF NOT EXISTS`.
 */
export async function migrate(store: Store): Promise<string[]> {
  const files = migrationFiles();
  const [first, ...rest] = files;
  if (first === undefined) return [];
  await store.client.command({ query: readFileSync(migrationsDir + first, 'utf8') });
  const applied = new Set(
    (await store.rows<{ name: string }>('SELECT name FROM schema_migrations')).map((r) => r.name),
  );
  const done: string[] = [];
  for (const file of [first, ...rest]) {
    if (applied.has(file)) continue;
    await store.client.command({ query: readFileSync(migrationsDir + file, 'utf8') });
    await store.insert('schema_migrations', [{ name: file, applied_at: Date.now() }]);
    done.push(file);
  }
  return done;
}
