import { createHmac, randomBytes, randomInt, timingSafeEqual } from 'node:crypto';
import type { Logger } from '../infra/log.ts';
import type { StoreCalls } from '../infra/store.ts';

const base62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
/** `mds_` and 4 random characters (24 bits): enough to tell keys apart in a list, too little to matter. */
export const keyPrefixLength = 8;
/** How many lately valid keys verify() remembers the digest of (oldest first out). */
const recentKeysHeld = 1_000;

/** How `key_hash` was made (migration 0170): HMAC-SHA256 with the server secret; `sha256` rows predate it and are refused. */
const keyedScheme = 'hmac-sha256';

/** A new key: `mds_` and 32 base62 characters, 190 bits of randomness. */
export function generateKey(): string {
  let key = 'mds_';
  for (let i = 0; i < 32; i++) key += base62[randomInt(base62.length)];
  return key;
}

/** Used when KeyStoreOptions.secret is not given: keys made with it verify in this process only. */
const processOnlySecret = randomBytes(32).toString('hex');

/** A key as `list()` shows it: never the key itself, which only its creator saw. */
export interface ApiKeyInfo {
  prefix: string;
  name: string;
  /** unix ms */
  createdAt: number;
  /** unix ms, null while the key is valid */
  revokedAt: number | null;
  /** Stored with the unkeyed sha256 of older versions: refused until replaced by a new key. */
  legacy: boolean;
}

/** What `npm run keys` does, on a KeyStore or through the running service's admin channel. */
export type KeyAdmin = Pick<KeyStore, 'create' | 'list' | 'revoke'>;

/** Who a verified key belongs to. `keyHash` is what the quota counts on, never the key. */
export interface VerifiedKey {
  prefix: string;
  keyHash: string;
}

export interface KeyStoreOptions {
  /**
   * The server secret keys are hashed with (api/keySecret.ts loads it). Every role passes it;
   * unset, a random one of this process is used, so keys made here verify only in this process
   * (tests that make and check keys in one process).
   */
  secret?: string;
  /** Interval (ms) of the background reload: how long a key made or revoked by another process takes to apply here. */
  refreshMs?: number;
  /** How long (ms) the last good set of keys is still used while reloads fail; after that, verify() throws KeysUnavailableError. */
  maxStaleMs?: number;
}

/** A revoke whose prefix names several valid keys, refused so that it cannot cut off more clients than meant. */
export class AmbiguousPrefixError extends Error {
  override name = 'AmbiguousPrefixError';
  constructor(prefix: string, count: number) {
    super(`${count} valid keys share the prefix ${prefix}: see them with list, and revoke with --all to revoke them all`);
  }
}

/** The valid keys cannot be told: never loaded yet, or the last good load is older than maxStaleMs. */
export class KeysUnavailableError extends Error {
  override name = 'KeysUnavailableError';
}

interface Snapshot {
  loadedAt: number;
  /** prefix -> keyed digests of the valid keys with that prefix */
  byPrefix: Map<string, Buffer[]>;
}

/**
 * API keys in the `api_keys` table, stored only as HMAC-SHA256 under a server secret that is not
 * in the store, so the table alone yields no key (not even a short or guessable one, by trying
 * candidates); a key's first 8 characters are kept in clear for listing. A started KeyStore holds every valid
 * key in memory and reloads them in the background every `refreshMs`, so checking a key never
 * waits on the store: it costs one HMAC, and a key found valid lately only a map lookup. A key made or revoked
 * by another process applies within `refreshMs`; through this instance, at once. When reloads
 * fail, the last good keys stay in use for `maxStaleMs`.
 */
export class KeyStore {
  readonly #store: StoreCalls;
  readonly #refreshMs: number;
  readonly #maxStaleMs: number;
  readonly #secret: string;
  #snapshot: Snapshot | undefined;
  #loading: Promise<boolean> | undefined;
  #timer: NodeJS.Timeout | undefined;
  #running = false;
  #log: Logger | undefined;
  /** Set while reloads fail, so an outage is logged once, not once per reload. */
  #failingSince: number | undefined;
  /** Bumped by every write, so a read that started before it is not kept. */
  #generation = 0;
  /** Legacy (unkeyed) valid rows are warned about once per process. */
  #legacyWarned = false;
  /**
   * Keys found valid lately, with their digest: hashing each request's key was about 6 % of the
   * API's time at 64 connections (test/bench/RESULTS.md). Still checked against the current keys on
   * every use, so a revocation applies as before. Held in this process's memory only.
   */
  readonly #recent = new Map<string, { verified: VerifiedKey; digest: Buffer }>();

  constructor(store: StoreCalls, options: KeyStoreOptions = {}) {
    this.#store = store;
    this.#refreshMs = options.refreshMs ?? 5_000;
    this.#maxStaleMs = options.maxStaleMs ?? 10 * 60_000;
    this.#secret = options.secret ?? processOnlySecret;
  }

  /**
   * Base64url HMAC-SHA256 of `payload` under a key derived from the server secret for `purpose`
   * (never the key-hash key itself): what the stream's tokens are signed with, so that every
   * replica sharing API_KEY_SECRET accepts them.
   */
  sign(purpose: string, payload: string): string {
    const derived = createHmac('sha256', this.#secret).update(`mds-sign:${purpose}`).digest();
    return createHmac('sha256', derived).update(payload).digest('base64url');
  }

  /** Hex HMAC-SHA256 of the key under the server secret: what `key_hash` holds. */
  #hash(key: string): string {
    return createHmac('sha256', this.#secret).update(key).digest('hex');
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
    const key = generateKey();
    const prefix = key.slice(0, keyPrefixLength);
    await this.#write({ keyHash: this.#hash(key), scheme: keyedScheme, prefix, name, createdAt: Date.now(), revokedAt: null, version: 1 });
    return { key, prefix };
  }

  /**
   * Provisions a chosen key (the demo's) unless it already exists. A key that was revoked stays
   * revoked: re-enabling it silently would undo an operator's decision.
   */
  async ensure(key: string, name: string): Promise<{ prefix: string; created: boolean }> {
    const keyHash = this.#hash(key);
    const prefix = key.slice(0, keyPrefixLength);
    const [row] = await this.#store.rows<{ revoked: number }>(
      'SELECT revoked_at IS NOT NULL AS revoked FROM api_keys FINAL WHERE key_hash = {keyHash:FixedString(64)}',
      { keyHash },
    );
    if (row?.revoked) throw new Error(`API key ${prefix}... was revoked; provision a different key`);
    if (row) return { prefix, created: false };
    await this.#write({ keyHash, scheme: keyedScheme, prefix, name, createdAt: Date.now(), revokedAt: null, version: 1 });
    return { prefix, created: true };
  }

  async list(): Promise<ApiKeyInfo[]> {
    const rows = await this.#store.rows<Omit<ApiKeyInfo, 'legacy'> & { legacy: number }>(
      `SELECT prefix, name, toUnixTimestamp64Milli(created_at) AS createdAt, toUnixTimestamp64Milli(revoked_at) AS revokedAt,
              scheme != {keyedScheme:String} AS legacy
       FROM api_keys FINAL ORDER BY created_at, prefix`,
      { keyedScheme },
    );
    return rows.map((r) => ({ ...r, legacy: r.legacy === 1 }));
  }

  /**
   * Revokes the valid key with this prefix; returns how many were revoked (0 or 1). Prefixes hold
   * only ~24 random bits, so two keys may share one: then nothing is revoked unless `all` says so.
   */
  async revoke(prefix: string, options: { all?: boolean } = {}): Promise<number> {
    const rows = await this.#store.rows<{ keyHash: string; scheme: string; name: string; createdAt: number; version: number }>(
      `SELECT key_hash AS keyHash, scheme, name, toUnixTimestamp64Milli(created_at) AS createdAt, version
       FROM api_keys FINAL WHERE prefix = {prefix:String} AND revoked_at IS NULL`,
      { prefix },
    );
    if (rows.length > 1 && !options.all) throw new AmbiguousPrefixError(prefix, rows.length);
    const revokedAt = Date.now();
    for (const r of rows) {
      await this.#write({ keyHash: r.keyHash, scheme: r.scheme, prefix, name: r.name, createdAt: r.createdAt, revokedAt, version: r.version + 1 });
    }
    return rows.length;
  }

  /**
   * The key's owner when the key is valid, from memory only (no store call). Throws
   * KeysUnavailableError when no load has succeeded yet or the last one is older than maxStaleMs.
   */
  verify(key: string): VerifiedKey | undefined {
    const known = this.#recent.get(key);
    if (known) {
      if (this.#holds(known.digest, known.verified.prefix)) return known.verified;
      this.#recent.delete(key);
      return undefined;
    }
    const verified = { prefix: key.slice(0, keyPrefixLength), keyHash: this.#hash(key) };
    const digest = Buffer.from(verified.keyHash, 'hex');
    if (!this.#holds(digest, verified.prefix)) return undefined;
    // Only keys that were valid: unknown keys sent at random cannot push the real ones out.
    if (this.#recent.size >= recentKeysHeld) this.#recent.delete(this.#recent.keys().next().value!);
    this.#recent.set(key, { verified, digest });
    return verified;
  }

  /**
   * Whether a key verified earlier is still valid (not revoked since), for what outlives one
   * request: a stream token, an open stream. Throws KeysUnavailableError as verify() does.
   */
  isValid({ prefix, keyHash }: VerifiedKey): boolean {
    return this.#holds(Buffer.from(keyHash, 'hex'), prefix);
  }

  /** Whether the current keys hold this digest (isValid's checks, which throw the same way). */
  #holds(digest: Buffer, prefix: string): boolean {
    const snapshot = this.#snapshot;
    if (!snapshot) throw new KeysUnavailableError('the API keys have not been loaded yet');
    if (Date.now() - snapshot.loadedAt > this.#maxStaleMs) {
      throw new KeysUnavailableError(`the API keys could not be reloaded for ${Math.round((Date.now() - snapshot.loadedAt) / 1000)} s`);
    }
    return digest.length === 32 && matches(snapshot.byPrefix.get(prefix) ?? [], digest);
  }

  async #write(row: {
    keyHash: string;
    scheme: string;
    prefix: string;
    name: string;
    createdAt: number;
    revokedAt: number | null;
    version: number;
  }): Promise<void> {
    await this.#store.insert('api_keys', [
      {
        key_hash: row.keyHash,
        scheme: row.scheme,
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
    if (!digests || row.scheme !== keyedScheme) return;
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
    let rows: { keyHash: string; prefix: string; scheme: string }[];
    try {
      rows = await this.#store.rows('SELECT key_hash AS keyHash, prefix, scheme FROM api_keys FINAL WHERE revoked_at IS NULL');
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
    let legacy = 0;
    for (const r of rows) {
      if (r.scheme !== keyedScheme) {
        legacy += 1;
        continue;
      }
      const list = byPrefix.get(r.prefix) ?? [];
      list.push(Buffer.from(r.keyHash, 'hex'));
      byPrefix.set(r.prefix, list);
    }
    if (legacy > 0 && !this.#legacyWarned) {
      this.#legacyWarned = true;
      // Their unkeyed sha256 can be tried against guesses by whoever has the table: they are not accepted.
      this.#log?.warn({ legacyKeys: legacy }, 'API keys stored with the unkeyed hash of older versions are refused: make new keys, then revoke these (npm run keys -- list marks them "legacy (rotate)")');
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
