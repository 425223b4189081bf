import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { Logger } from './log.ts';
import type { Store } from './store.ts';

// ClickHouse has no transactions, and "insert my row, read back, the earliest wins" races: a row
// timestamped first can become visible after a later one was read alone. What the engine does
// decide atomically is deduplication: of inserts that carry the same insert_deduplication_token
// into a MergeTree with a deduplication window, it keeps the first to commit and drops the others,
// in the same step that makes the kept one visible. So every attempt at generation N inserts with
// the token of N, then reads generation N back: whoever's row is there holds the lock.
//
// Guarantee: at most one live holder per generation, and a process migrates only while the newest
// generation is its own and unexpired (checked before each migration). A holder that stops renewing
// (dead, or paused longer than the TTL) loses the lock at its expiry; expiry compares the holder's
// clock with the waiter's, so clocks must agree to well within the TTL. A holder that loses the lock
// stops before its next migration, but the one it is running completes: migrations are idempotent
// for that reason (and for a crash between a migration and its record).

/** The newest generation of the lock as stored. */
interface LockRow {
  generation: number;
  owner: string;
  expires_ms: number;
}

export class MigrationLockLostError extends Error {
  override name = 'MigrationLockLostError';
}

const table = 'schema_migration_lock';

async function newest(store: Store): Promise<LockRow | undefined> {
  const [row] = await store.rows<LockRow>(`SELECT generation, owner, expires_ms FROM ${table} FINAL ORDER BY generation DESC LIMIT 1`);
  return row;
}

/** The lock on applying migrations, taken through the store itself; see the guarantee above. */
export class MigrationLock {
  readonly #store: Store;
  readonly #generation: number;
  readonly #owner: string;
  readonly #ttlMs: number;
  #version = 0;
  #renewal: NodeJS.Timeout;

  private constructor(store: Store, generation: number, owner: string, ttlMs: number, log: Logger | undefined) {
    this.#store = store;
    this.#generation = generation;
    this.#owner = owner;
    this.#ttlMs = ttlMs;
    // Renewed three times per TTL, so one late renewal does not lose it.
    this.#renewal = setInterval(() => {
      this.#write(Date.now() + ttlMs).catch((err: unknown) => log?.warn({ err }, 'migration lock not renewed'));
    }, ttlMs / 3);
    this.#renewal.unref();
  }

  /** Takes the lock, or says who holds it. */
  static async take(store: Store, ttlMs: number, log?: Logger): Promise<{ lock: MigrationLock } | { heldBy: string; expiresInMs: number }> {
    const current = await newest(store);
    if (current && current.expires_ms > Date.now()) return { heldBy: current.owner, expiresInMs: current.expires_ms - Date.now() };
    const generation = (current?.generation ?? 0) + 1;
    const owner = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
    await store.insert(table, [{ generation, owner, expires_ms: Date.now() + ttlMs, version: 0 }], `${table}:${generation}`);
    const [kept] = await store.rows<{ owner: string; expires_ms: number }>(`SELECT owner, expires_ms FROM ${table} FINAL WHERE generation = {generation:UInt64}`, { generation });
    if (kept?.owner === owner) return { lock: new MigrationLock(store, generation, owner, ttlMs, log) };
    return { heldBy: kept?.owner ?? 'another process', expiresInMs: (kept?.expires_ms ?? Date.now()) - Date.now() };
  }

  /** Throws MigrationLockLostError unless this is still the newest, unexpired generation. */
  async assertHeld(): Promise<void> {
    const current = await newest(this.#store);
    if (current?.generation !== this.#generation || current.owner !== this.#owner || current.expires_ms <= Date.now()) {
      throw new MigrationLockLostError(`lost the migration lock (generation ${this.#generation}, ${this.#owner}) before finishing`);
    }
  }

  async release(): Promise<void> {
    clearInterval(this.#renewal);
    await this.#write(Date.now());
  }

  async #write(expiresMs: number): Promise<void> {
    this.#version += 1;
    const version = this.#version;
    await this.#store.insert(table, [{ generation: this.#generation, owner: this.#owner, expires_ms: expiresMs, version }], `${table}:${this.#generation}:${this.#owner}:${version}`);
  }
}
