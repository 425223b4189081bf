import { createHash, randomInt, timingSafeEqual } from 'node:crypto';
import type { Store } from '../infra/store.ts';

const base62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const keyPrefixLength = 12;

/** A key as `list()` shows it: never the key itself, which only its creator saw. */
export interface ApiKeyInfo {
  prefix: string;
  name: string;
  /** unix ms */
  createdAt: number;
  /** unix ms, null while the key is valid */
  revokedAt: number | null;
}

/** Who a verified key belongs to. `keyHash` is what the quota counts on, never the key. */
export interface VerifiedKey {
  prefix: string;
  keyHash: string;
}

export interface KeyStoreOptions {
  /** How long (ms) the set of valid keys is reused before it is read again: the revocation delay. */
  cacheMs?: number;
}

interface Snapshot {
  loadedAt: number;
  /** prefix -> sha256 digests of the valid keys with that prefix */
  byPrefix: Map<string, Buffer[]>;
}

const sha256Hex = (key: string) => createHash('sha256').update(key).digest('hex');

/**
 * API keys in the `api_keys` table, stored only as sha256. Each process keeps the valid keys in
 * memory for `cacheMs`, so a revocation made anywhere takes effect on every replica within that
 * time; a key not in memory costs one primary-key lookup, so a new key works at once.
 */
export class KeyStore {
  readonly #store: Store;
  readonly #cacheMs: number;
  #snapshot: Snapshot | undefined;
  #loading: Promise<Snapshot> | undefined;
  /** Bumped by every write, so a read that started before it is not kept. */
  #generation = 0;

  constructor(store: Store, options: KeyStoreOptions = {}) {
    this.#store = store;
    this.#cacheMs = options.cacheMs ?? 5_000;
  }

  /** Makes a new key; the caller shows it once, as only its hash is kept. */
  async create(name: string): Promise<{ key: string; prefix: string }> {
    let key = 'mds_';
    for (let i = 0; i < 32; i++) key += base62[randomInt(base62.length)];
    const prefix = key.slice(0, keyPrefixLength);
    await this.#write({ keyHash: sha256Hex(key), prefix, name, createdAt: Date.now(), revokedAt: null, version: 1 });
    return { key, prefix };
  }

  /**
   * Provisions a chosen key (the demo's) unless it already exists. A key that was revoked stays
   * revoked: re-enabling it silently would undo an operator's decision.
   */
  async ensure(key: string, name: string): Promise<{ prefix: string; created: boolean }> {
    const keyHash = sha256Hex(key);
    const prefix = key.slice(0, keyPrefixLength);
    const [row] = await this.#store.rows<{ revoked: number }>(
      'SELECT revoked_at IS NOT NULL AS revoked FROM api_keys FINAL WHERE key_hash = {keyHash:FixedString(64)}',
      { keyHash },
    );
    if (row?.revoked) throw new Error(`API key ${prefix}... was revoked; provision a different key`);
    if (row) return { prefix, created: false };
    await this.#write({ keyHash, prefix, name, createdAt: Date.now(), revokedAt: null, version: 1 });
    return { prefix, created: true };
  }

  async list(): Promise<ApiKeyInfo[]> {
    return this.#store.rows<ApiKeyInfo>(
      `SELECT prefix, name, toUnixTimestamp64Milli(created_at) AS createdAt, toUnixTimestamp64Milli(revoked_at) AS revokedAt
       FROM api_keys FINAL ORDER BY created_at, prefix`,
    );
  }

  /** Revokes every valid key with this prefix; returns how many. */
  async revoke(prefix: string): Promise<number> {
    const rows = await this.#store.rows<{ keyHash: string; name: string; createdAt: number; version: number }>(
      `SELECT key_hash AS keyHash, name, toUnixTimestamp64Milli(created_at) AS createdAt, version
       FROM api_keys FINAL WHERE prefix = {prefix:String} AND revoked_at IS NULL`,
      { prefix },
    );
    const revokedAt = Date.now();
    for (const r of rows) {
      await this.#write({ keyHash: r.keyHash, prefix, name: r.name, createdAt: r.createdAt, revokedAt, version: r.version + 1 });
    }
    return rows.length;
  }

  /** The key's owner when the key is valid. */
  async verify(key: string): Promise<VerifiedKey | undefined> {
    const digest = createHash('sha256').update(key).digest();
    const prefix = key.slice(0, keyPrefixLength);
    const snapshot = await this.#current();
    if (!matches(snapshot.byPrefix.get(prefix) ?? [], digest)) {
      // A key made since the snapshot (by the CLI or another process) works at once: look it up by its hash.
      const rows = await this.#store.rows<{ keyHash: string }>(
        'SELECT key_hash AS keyHash FROM api_keys FINAL WHERE key_hash = {keyHash:FixedString(64)} AND revoked_at IS NULL',
        { keyHash: digest.toString('hex') },
      );
      const found = rows.map((r) => Buffer.from(r.keyHash, 'hex'));
      if (!matches(found, digest)) return undefined;
      snapshot.byPrefix.set(prefix, [...(snapshot.byPrefix.get(prefix) ?? []), ...found]);
    }
    return { prefix, keyHash: digest.toString('hex') };
  }

  async #write(row: {
    keyHash: string;
    prefix: string;
    name: string;
    createdAt: number;
    revokedAt: number | null;
    version: number;
  }): Promise<void> {
    await this.#store.insert('api_keys', [
      {
        key_hash: row.keyHash,
        prefix: row.prefix,
        name: row.name,
        created_at: row.createdAt,
        revoked_at: row.revokedAt,
        version: row.version,
      },
    ]);
    // This process sees its own changes at once; other processes within cacheMs.
    this.#generation += 1;
    this.#snapshot = undefined;
    this.#loading = undefined;
  }

  /** The valid keys, read again when older than cacheMs; concurrent readers share one query. */
  async #current(): Promise<Snapshot> {
    const snapshot = this.#snapshot;
    if (snapshot && Date.now() - snapshot.loadedAt < this.#cacheMs) return snapshot;
    if (!this.#loading) {
      const loading = this.#load().finally(() => {
        if (this.#loading === loading) this.#loading = undefined;
      });
      this.#loading = loading;
    }
    return this.#loading;
  }

  async #load(): Promise<Snapshot> {
    const loadedAt = Date.now();
    const generation = this.#generation;
    const rows = await this.#store.rows<{ keyHash: string; prefix: string }>(
      'SELECT key_hash AS keyHash, prefix FROM api_keys FINAL WHERE revoked_at IS NULL',
    );
    const byPrefix = new Map<string, Buffer[]>();
    for (const r of rows) {
      const list = byPrefix.get(r.prefix) ?? [];
      list.push(Buffer.from(r.keyHash, 'hex'));
      byPrefix.set(r.prefix, list);
    }
    const snapshot = { loadedAt, byPrefix };
    if (generation === this.#generation) this.#snapshot = snapshot;
    return snapshot;
  }
}

/** Compares digests in constant time; the prefix only narrowed the candidates. */
function matches(candidates: readonly Buffer[], digest: Buffer): boolean {
  let found = false;
  for (const candidate of candidates) found = timingSafeEqual(candidate, digest) || found;
  return found;
}
