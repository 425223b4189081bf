import type { Logger } from './log.ts';
import { retentionOf, retentionTables, type RetentionDays, type RetentionTable } from './retentionPolicy.ts';
import type { Store } from './store.ts';

/** What applying the retention did to one table. */
export interface RetentionChange {
  table: RetentionTable;
  /** The TTL expression before (undefined: none). */
  from: string | undefined;
  /** The TTL expression now (undefined: removed). */
  to: string | undefined;
}

/** The TTL of `days` on a table, written as ClickHouse shows it back in `engine_full`, so that an unchanged one compares equal. */
export function ttlExpression(table: RetentionTable, days: number): string {
  if (!Number.isSafeInteger(days) || days < 1) throw new Error(`retention of ${table}: ${days} is not a whole number of days`);
  return `${retentionTables[table].age} + toIntervalDay(${days})`;
}

/** The table TTL in an `engine_full` (`... TTL <expr> SETTINGS ...`); undefined when there is none. */
export function ttlOf(engineFull: string): string | undefined {
  return / TTL (.+?)(?: SETTINGS |$)/.exec(engineFull)?.[1];
}

/**
 * Sets each time-series table's TTL to its retention (STORE_RETENTION_DAYS over the defaults of
 * infra/retentionPolicy.ts): MODIFY TTL where it differs, REMOVE TTL where a table should keep
 * everything and has one (REMOVE on a table without one is an error, so only then). A table the
 * store does not have is left alone. Idempotent; returns what changed. Run after the migrations.
 * The engine drops expired rows at its merges (a changed TTL is applied to the existing parts).
 */
export async function applyRetention(store: Store, named: RetentionDays, log?: Logger): Promise<RetentionChange[]> {
  const wanted = retentionOf(named);
  const tables = Object.keys(retentionTables) as RetentionTable[];
  const rows = await store.rows<{ name: string; engine_full: string }>(
    'SELECT name, engine_full FROM system.tables WHERE database = currentDatabase() AND name IN {tables:Array(String)}',
    { tables },
  );
  const current = new Map(rows.map((r) => [r.name, ttlOf(r.engine_full)]));
  const changes: RetentionChange[] = [];
  for (const table of tables) {
    if (!current.has(table)) continue;
    const days = wanted[table];
    const from = current.get(table);
    const to = days === undefined ? undefined : ttlExpression(table, days);
    if (from === to) continue;
    // The table name comes from the fixed map and the days are a validated integer: nothing from outside is spliced in.
    const query = to === undefined ? `ALTER TABLE ${table} REMOVE TTL` : `ALTER TABLE ${table} MODIFY TTL ${to}`;
    await store.client.command({ query });
    changes.push({ table, from, to });
    log?.info({ table, from: from ?? 'none', to: to ?? 'none' }, to === undefined ? 'retention removed: the table keeps every row' : 'retention set');
  }
  return changes;
}
