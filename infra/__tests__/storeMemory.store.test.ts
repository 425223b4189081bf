// The store engine's memory as the operator sees it: `mds_store_memory_bytes{part}` carries what the
// engine holds by its own accounting, and its mark cache fills once a table's parts are read.
import { afterAll, beforeAll, expect, test } from 'vitest';
import { countingQueries, openTestStore } from '../../test/support/harness.ts';
import { createMetrics } from '../metrics.ts';
import { storeMemoryParts, watchStoreMemory } from '../storeMemory.ts';

let db: Awaited<ReturnType<typeof openTestStore>>;
beforeAll(async () => (db = await openTestStore()));
afterAll(async () => db?.dispose());

/** Every `mds_store_memory_bytes` sample of a scrape, by part. */
function parts(text: string): Map<string, number> {
  const found = new Map<string, number>();
  for (const match of text.matchAll(/^mds_store_memory_bytes\{part="([a-z_]+)"\} (\S+)$/gm)) found.set(match[1]!, Number(match[2]));
  return found;
}

test('each part is the engine metric of its name, and the mark cache holds the marks of a table once it is read', async () => {
  const metrics = createMetrics();
  watchStoreMemory({ store: db.store, metrics });
  // Parts on disk to read: the marks of a MergeTree table land in the mark cache.
  await db.store.client.command({ query: 'CREATE TABLE memory_probe (k UInt64, v String) ENGINE = MergeTree ORDER BY k' });
  await db.store.client.command({ query: "INSERT INTO memory_probe SELECT number, repeat('x', 50) FROM numbers(200000)" });
  await db.store.rows('SELECT sum(length(v)) AS n FROM memory_probe WHERE k % 7 = 3');

  const scraped = parts(await metrics.registry.metrics());
  expect([...scraped.keys()].sort()).toEqual(Object.keys(storeMemoryParts).sort());
  // Read straight from the engine after the scrape: the caches hold what they held (nothing evicts
  // them here); the tracked total moves with every allocation, so it is compared within a margin.
  const engine = await db.store.rows<{ metric: string; value: string }>("SELECT metric, toString(value) AS value FROM system.metrics WHERE metric IN ('MemoryTracking', 'MarkCacheBytes')");
  const byName = new Map(engine.map((r) => [r.metric, Number(r.value)]));
  expect(scraped.get('mark_cache')).toBe(byName.get('MarkCacheBytes'));
  expect(scraped.get('mark_cache')).toBeGreaterThan(0);
  expect(scraped.get('tracked')).toBeGreaterThan(scraped.get('mark_cache')!);
  expect(Math.abs(scraped.get('tracked')! - byName.get('MemoryTracking')!)).toBeLessThan(64 * 1024 * 1024);
});

test('scrapes closer together than its age ask the engine once', async () => {
  const metrics = createMetrics();
  const counting = countingQueries(db.store);
  watchStoreMemory({ store: counting.store, metrics });
  const first = parts(await metrics.registry.metrics());
  const second = parts(await metrics.registry.metrics());
  expect(counting.count()).toBe(1);
  expect(second).toEqual(first);
  expect(first.get('tracked')).toBeGreaterThan(0);
});

test('a store that cannot be read leaves the gauge empty and /metrics answering', async () => {
  const metrics = createMetrics();
  const failing = { ...db.store, rows: async () => Promise.reject(new Error('store down')) };
  watchStoreMemory({ store: failing, metrics });
  const text = await metrics.registry.metrics();
  expect(parts(text).size).toBe(0);
  expect(text).toContain('# HELP mds_store_memory_bytes');
});
