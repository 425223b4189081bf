// What the api_keys table gives away: with its rows (prefix and digest) and without the server
// secret, no candidate key (the right one included) can be confirmed. Rows of the older unkeyed
// scheme are refused, listed as legacy, and warned about.
import { createHash, createHmac, randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Store } from '../../infra/store.ts';
import { withStoreFaults } from '../../infra/storeFaults.ts';
import { openTestStore, silentLog } from '../../test/support/harness.ts';
import { until } from '../../test/support/until.ts';
import { AmbiguousPrefixError, generateKey, KeyStore } from '../keys.ts';

const secret = randomBytes(32).toString('hex');
let env: Awaited<ReturnType<typeof openTestStore>>;
let store: Store;

beforeAll(async () => {
  env = await openTestStore();
  store = env.store;
});
afterAll(() => env.dispose());

interface StolenRow {
  prefix: string;
  key_hash: string;
}

describe('a stolen api_keys table', () => {
  it('confirms no candidate key by sha256 or by HMAC with a wrong secret; only the server secret matches', async () => {
    const keys = new KeyStore(store, { secret });
    const { key, prefix } = await keys.create('stolen');
    // A short guessable key, as a demo key used to be: the table must not confirm it either.
    const guessable = 'mds_demo_0123456789abcdef0123456789';
    await keys.ensure(guessable, 'guessable');

    const stolen = await store.rows<StolenRow>('SELECT prefix, key_hash FROM api_keys');
    const digests = new Set(stolen.map((r) => r.key_hash));
    expect(JSON.stringify(stolen)).not.toContain(key.slice(prefix.length));
    expect(prefix).toBe(key.slice(0, 8));

    const candidates = [key, guessable, ...Array.from({ length: 200 }, () => `${prefix}${randomBytes(16).toString('hex')}`)];
    const sha256 = (k: string) => createHash('sha256').update(k).digest('hex');
    const hmac = (s: string, k: string) => createHmac('sha256', s).update(k).digest('hex');
    const wrongSecrets = [randomBytes(32).toString('hex'), '', 'secret', secret.slice(1)];
    for (const candidate of candidates) {
      expect(digests.has(sha256(candidate))).toBe(false);
      for (const wrong of wrongSecrets) expect(digests.has(hmac(wrong, candidate))).toBe(false);
    }
    // The stored digest is the HMAC under the server secret (computed here, not by the KeyStore).
    expect(digests.has(hmac(secret, key))).toBe(true);
    expect(digests.has(hmac(secret, guessable))).toBe(true);

    // A KeyStore with another secret (a copy of the store elsewhere) accepts neither key.
    const elsewhere = new KeyStore(store, { secret: randomBytes(32).toString('hex') });
    expect(await elsewhere.start(silentLog)).toBe(true);
    elsewhere.close();
    expect(elsewhere.verify(key)).toBeUndefined();
    expect(elsewhere.verify(guessable)).toBeUndefined();
    const server = new KeyStore(store, { secret });
    expect(await server.start(silentLog)).toBe(true);
    server.close();
    expect(server.verify(key)).toMatchObject({ prefix });
    expect(server.verify(guessable)).toMatchObject({ prefix: guessable.slice(0, 8) });
  });

  it('generated keys carry 190 bits: mds_ and 32 base62 characters, all distinct', () => {
    const made = Array.from({ length: 1000 }, generateKey);
    for (const key of made) expect(key).toMatch(/^mds_[0-9A-Za-z]{32}$/);
    expect(new Set(made).size).toBe(made.length);
    // Every base62 character shows up at every position over 1000 keys (a narrowed alphabet would not).
    expect(new Set(made.map((k) => k[4])).size).toBeGreaterThan(55);
  });
});

describe('rows hashed by older versions (unkeyed sha256)', () => {
  it('are refused, listed as legacy, warned about once at load, and can be revoked', async () => {
    const oldKey = `mds_${randomBytes(16).toString('hex')}`;
    const oldPrefix = oldKey.slice(0, 12);
    // As version 0019 wrote it: no scheme column, so the migration's default marks it.
    await store.insert('api_keys', [
      { key_hash: createHash('sha256').update(oldKey).digest('hex'), prefix: oldPrefix, name: 'old', created_at: Date.now(), revoked_at: null, version: 1 },
    ]);
    const lines: string[] = [];
    const log = pino({ level: 'warn' }, new Writable({ write: (chunk, _enc, done) => (lines.push(String(chunk)), done()) }));
    // Through a wrapper that counts the reloads' queries (it injects no fault).
    const counted = withStoreFaults(store);
    const keys = new KeyStore(counted.store, { secret, refreshMs: 50 });
    expect(await keys.start(log)).toBe(true);
    try {
      expect(keys.verify(oldKey)).toBeUndefined();
      // Several reloads: still one warning.
      const loads = counted.calls().queries;
      await until(() => counted.calls().queries >= loads + 5, 'five more reloads of the keys', { everyMs: 10 });
      expect(lines).toHaveLength(1);
      expect(lines[0]).toContain('"legacyKeys":1');
      expect(lines[0]).not.toContain(oldPrefix);
      const listed = (await keys.list()).find((k) => k.prefix === oldPrefix);
      expect(listed).toMatchObject({ name: 'old', revokedAt: null, legacy: true });
      expect((await keys.list()).filter((k) => k.legacy)).toHaveLength(1);

      expect(await keys.revoke(oldPrefix)).toBe(1);
      const [row] = await store.rows<{ scheme: string; revoked: number }>(
        'SELECT scheme, revoked_at IS NOT NULL AS revoked FROM api_keys FINAL WHERE prefix = {p:String}',
        { p: oldPrefix },
      );
      expect(row).toEqual({ scheme: 'sha256', revoked: 1 });
    } finally {
      keys.close();
    }
  });
});

describe('revoking by prefix', () => {
  it('refuses a prefix that several valid keys share, unless told to revoke them all', async () => {
    // Two chosen keys (as DEMO_API_KEY provisions them) with one 8-character prefix.
    const shared = `mds_${randomBytes(2).toString('hex')}`;
    const [a, b] = [`${shared}${randomBytes(16).toString('hex')}`, `${shared}${randomBytes(16).toString('hex')}`];
    const keys = new KeyStore(store, { secret });
    await keys.ensure(a, 'a');
    await keys.ensure(b, 'b');
    await expect(keys.revoke(shared)).rejects.toBeInstanceOf(AmbiguousPrefixError);
    const valid = async () => (await keys.list()).filter((k) => k.prefix === shared && k.revokedAt === null).length;
    expect(await valid()).toBe(2);
    expect(await keys.revoke(shared, { all: true })).toBe(2);
    expect(await valid()).toBe(0);
  });
});

describe('signing (the stream tokens)', () => {
  it('signs alike on every replica with the secret, differently under another secret or purpose, never as a key hash', () => {
    const payload = 'eyJwIjoibWRzX0FiQ2QifQ';
    const replicaA = new KeyStore(store, { secret });
    const replicaB = new KeyStore(store, { secret });
    const other = new KeyStore(store, { secret: randomBytes(32).toString('hex') });
    // Expected from the definition: HMAC-SHA256 under HMAC-SHA256(secret, "mds-sign:<purpose>").
    const derived = createHmac('sha256', secret).update('mds-sign:stream-token').digest();
    const expected = createHmac('sha256', derived).update(payload).digest('base64url');
    expect(replicaA.sign('stream-token', payload)).toBe(expected);
    expect(replicaB.sign('stream-token', payload)).toBe(expected);
    expect(other.sign('stream-token', payload)).not.toBe(expected);
    expect(replicaA.sign('another-purpose', payload)).not.toBe(expected);
    expect(expected).not.toBe(createHmac('sha256', secret).update(payload).digest('base64url'));
  });
});
