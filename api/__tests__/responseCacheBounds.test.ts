// The response cache pushed far past its bounds (bytes, with compressed forms, and entries): what it
// keeps is exactly what a plain model of "oldest build dropped first" keeps, checked key by key.
import { expect, test } from 'vitest';
import { seededRandom } from '../../simulator/market.ts';
import { ResponseCache } from '../responseCache.ts';

const storeDown = () => Promise.reject(new Error('store down'));

/** Whether `key` is served from the cache; a miss tries a build that fails, which stores nothing. */
function isCached(cache: ResponseCache, key: string): boolean {
  const got = cache.get(key, storeDown);
  if (got instanceof Promise) got.catch(() => {});
  return !(got instanceof Promise);
}

/** The policy, written plainly: entries in build order; drop from the oldest while over either bound. */
class KeptModel {
  readonly entries: { key: string; bytes: number }[] = [];
  readonly maxBytes: number;
  readonly maxEntries: number;
  constructor(maxBytes: number, maxEntries: number) {
    this.maxBytes = maxBytes;
    this.maxEntries = maxEntries;
  }
  built(key: string, bytes: number): void {
    this.entries.push({ key, bytes });
    this.#trim();
  }
  grew(key: string, bytes: number): void {
    const entry = this.entries.find((e) => e.key === key);
    if (!entry) return; // already dropped: its compressed form costs nothing
    entry.bytes += bytes;
    this.#trim();
  }
  #trim(): void {
    const total = () => this.entries.reduce((s, e) => s + e.bytes, 0);
    while (this.entries.length > this.maxEntries || total() > this.maxBytes) this.entries.shift();
  }
}

test('20 times its byte bound, bodies of varied size, some compressed: keeps the newest that fit, drops the rest', async () => {
  const maxBytes = 20_000;
  const cache = new ResponseCache(60_000, { maxBytes });
  const model = new KeptModel(maxBytes, 1_000);
  const random = seededRandom(3);
  const keys: string[] = [];
  let pushed = 0;
  for (let i = 0; pushed < 20 * maxBytes; i++) {
    const key = `k${i}`;
    keys.push(key);
    // Hex of random bytes, 100 to 3,000 characters: a body of that length + 2 (a JSON string).
    const text = Array.from({ length: 50 + Math.floor(random() * 1_450) }, () => Math.floor(random() * 256).toString(16).padStart(2, '0')).join('');
    const { entry } = await cache.get(key, async () => text);
    expect(entry.body.length).toBe(text.length + 2);
    model.built(key, text.length + 2);
    pushed += text.length + 2;
    if (i % 5 === 0) {
      // A client that accepts gzip: the compressed form joins the entry's cost once it is made.
      const gzipped = await cache.encodedBody(entry, 'gzip');
      // The cache counts it when the compression settles: let that callback run.
      await new Promise((r) => setImmediate(r));
      model.grew(key, gzipped.length);
      pushed += gzipped.length;
    }
  }
  const kept = new Set(model.entries.map((e) => e.key));
  expect(kept.size).toBeGreaterThan(5);
  expect(kept.size).toBeLessThan(keys.length / 10);
  // Newest first: probing a dropped key stores nothing, so later probes see the same cache.
  expect(keys.toReversed().filter((k) => isCached(cache, k))).toEqual(keys.toReversed().filter((k) => kept.has(k)));
});

test('ten times its entry bound: keeps exactly the newest maxEntries keys', async () => {
  const cache = new ResponseCache(60_000, { maxEntries: 25 });
  const keys = Array.from({ length: 250 }, (_, i) => `e${i}`);
  for (const key of keys) await cache.get(key, async () => ({ key }));
  expect(keys.filter((k) => isCached(cache, k))).toEqual(keys.slice(-25));
});
