import { createHash, randomInt, timingSafeEqual } from 'node:crypto';
import type { Logger } from '../infra/log.ts';
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
  /** Interval (ms) of the background reload: how long a key made or revoked by another process takes to apply here. */
  refreshMs?: number;
  /** How long (ms) the last good set of keys is still used while reloads fail; after that, verify() throws KeysUnavailableError. */
  maxStaleMs?: number;
}

/** The valid keys cannot be told: never loaded yet, or the last good load is older than maxStaleMs. */
export class KeysUnavailableError extends Error {
  override name = 'KeysUnavailableError';
}

interface Snapshot {
  loadedAt: number;
  /** prefix -> sha256 digests of the valid keys with that prefix */
  byPrefix: Map<string, Buffer[]>;
}

const sha256Hex = (key: string) => createHash('sha256').update(key).digest('hex');

/**
 * API keys in the `api_keys` table, stored only as sha256. A started KeyStore holds every valid
 * key in memory and reloads them in the background every `refreshMs`, so checking a key never
 * waits on the store, and an unknown key costs nothing but a map lookup. A key made or revoked
 * by another process applies within `refreshMs`; through this instance, at once. When reloads
 * fail, the last good keys stay in use for `maxStaleMs`.
 */
export class KeyStore {
  readonly #store: Store;
  readonly #refreshMs: number;
  readonly #maxStaleMs: number;
  #snapshot: Snapshot | undefined;
  #loading: Promise<boolean> | undefined;
  #timer: NodeJS.Timeout | undefined;
  #running = false;
  #log: Logger | undefined;
  /** Set while reloads fail, so an outage is logged once, not once per reload. */
  #failingSince: number | undefined;
  /** Bumped by every write, so a read that started before it is not kept. */
  #generation = 0;

  constructor(store: Store, options: KeyStoreOptions = {}) {
    this.#store = store;
    this.#refreshMs = options.refreshMs ?? 5_000;
    this.#maxStaleMs = options.maxStaleMs ?? 10 * 60_000;
  }

  /**
   * Loads the valid keys, then reloads them every refreshMs until close(). Resolves once the
   * first load has settled: true when it succeeded; false when it failed (the store's deadline
   * bounds it), in which case verify() throws until a background reload succeeds.
   */
  async start(log: Logger): Promise<boolean> {
    this.#log = log;
    this.#running = true;
    const loaded = await this.#reload();
    this.#schedule();
    return loaded;
  }

  /** Stops the background reload. */
  close(): void {
    this.#running = false;
    clearTimeout(this.#timer);
  }

  /** The next reload, refreshMs after the previous one settled (a slow store never stacks them up). */
  #schedule(): void {
    clearTimeout(this.#timer);
    if (!this.#running) return;
    this.#timer = setTimeout(() => void this.#reload().finally(() => this.#schedule()), this.#refreshMs).unref();
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

  /**
   * The key's owner when the key is valid, from memory only (no store call). Throws
   * KeysUnavailableError when no load has succeeded yet or the last one is older than maxStaleMs.
   */
  verify(key: string): VerifiedKey | undefined {
    const snapshot = this.#snapshot;
    if (!snapshot) throw new KeysUnavailableError('the API keys have not been loaded yet');
    if (Date.now() - snapshot.loadedAt > this.#maxStaleMs) {
      throw new KeysUnavailableError(`the API keys could not be reloaded for ${Math.round((Date.now() - snapshot.loadedAt) / 1000)} s`);
    }
    const digest = createHash('sha256').update(key).digest();
    const prefix = key.slice(0, keyPrefixLength);
    if (!matches(snapshot.byPrefix.get(prefix) ?? [], digest)) return undefined;
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
    // This process sees its own changes at once, other processes at their next reload. A reload
    // already running may have read the table before this write: its result is dropped.
    this.#generation += 1;
    const digests = this.#snapshot?.byPrefix;
    if (!digests) return;
    const digest = Buffer.from(row.keyHash, 'hex');
    const others = (digests.get(row.prefix) ?? []).filter((d) => !d.equals(digest));
    if (row.revokedAt === null) others.push(digest);
    digests.set(row.prefix, others);
  }

  /** One reload at a time; true when it succeeded. A failure keeps the last good snapshot. */
  #reload(): Promise<boolean> {
    this.#loading ??= this.#load().finally(() => (this.#loading = undefined));
    return this.#loading;
  }

  async #load(): Promise<boolean> {
    const loadedAt = Date.now();
    const generation = this.#generation;
    let rows: { keyHash: string; prefix: string }[];
    try {
      rows = await this.#store.rows('SELECT key_hash AS keyHash, prefix FROM api_keys FINAL WHERE revoked_at IS NULL');
    } catch (err) {
      if (this.#failingSince === undefined) {
        this.#failingSince = loadedAt;
        this.#log?.warn({ err, maxStaleMs: this.#maxStaleMs }, 'API keys cannot be reloaded; the last loaded keys stay in use');
      }
      return false;
    }
    if (this.#failingSince !== undefined) {
      this.#log?.info({ failedForMs: loadedAt - this.#failingSince }, 'API keys reloaded again');
      this.#failingSince = undefined;
    }
    const byPrefix = new Map<string, Buffer[]>();
    for (const r of rows) {
      const list = byPrefix.get(r.prefix) ?? [];
      list.push(Buffer.from(r.keyHash, 'hex'));
      byPrefix.set(r.prefix, list);
    }
    if (generation === this.#generation) this.#snapshot = { loadedAt, byPrefix };
    return true;
  }
}

/** Compares digests in constant time; the prefix only narrowed the candidates. */
function matches(candidates: readonly Buffer[], digest: Buffer): boolean {
  let found = false;
  for (const candidate of candidates) found = timingSafeEqual(candidate, digest) || found;
  return found;
}
