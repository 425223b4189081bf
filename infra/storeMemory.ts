import { Gauge } from 'prom-client';
import type { Metrics } from './metrics.ts';
import { recentReading, storeGaugeMaxAgeMs } from './recentReading.ts';
import type { StoreCalls } from './store.ts';

/**
 * The store engine's memory as the engine itself accounts it (system.metrics): what its allocations
 * hold in all (`tracked`) and its caches within that. Embedded, chDB lives in this process, so these
 * are the part of the process's RSS that is the store's; against a ClickHouse server, the server's.
 */
export const storeMemoryParts = {
  tracked: 'MemoryTracking',
  mark_cache: 'MarkCacheBytes',
  uncompressed_cache: 'UncompressedCacheBytes',
  primary_index_cache: 'PrimaryIndexCacheBytes',
  query_condition_cache: 'QueryConditionCacheBytes',
  query_cache: 'QueryCacheBytes',
  page_cache: 'PageCacheBytes',
} as const;

export type StoreMemoryPart = keyof typeof storeMemoryParts;

export async function readStoreMemory(store: StoreCalls): Promise<Map<StoreMemoryPart, number>> {
  const names = Object.values(storeMemoryParts);
  // An Int64 comes as a JSON string or number depending on the engine's settings: Number() takes both.
  const rows = await store.rows<{ metric: string; value: number | string }>('SELECT metric, toInt64(value) AS value FROM system.metrics WHERE metric IN {names:Array(String)}', { names });
  const byMetric = new Map(rows.map((r) => [r.metric, Number(r.value)]));
  const parts = new Map<StoreMemoryPart, number>();
  for (const [part, metric] of Object.entries(storeMemoryParts) as [StoreMemoryPart, string][]) {
    const value = byMetric.get(metric);
    // An engine version without this metric: the part is left out rather than read as 0.
    if (value !== undefined) parts.set(part, value);
  }
  return parts;
}

/**
 * Registers `mds_store_memory_bytes{part}`, read at a scrape at most every storeGaugeMaxAgeMs. A
 * failed read leaves the gauge empty for that scrape rather than failing /metrics.
 */
export function watchStoreMemory(options: { store: StoreCalls; metrics: Metrics }): void {
  const { store, metrics } = options;
  const reading = recentReading(() => readStoreMemory(store), storeGaugeMaxAgeMs);
  new Gauge({
    name: 'mds_store_memory_bytes',
    help: "The store engine's memory by its own accounting (system.metrics): part=\"tracked\" is all it holds, the others its caches within that. Embedded (chDB), part of this process's RSS.",
    labelNames: ['part'],
    registers: [metrics.registry],
    async collect() {
      this.reset();
      const parts = await reading().catch(() => undefined);
      for (const [part, bytes] of parts ?? []) this.set({ part }, bytes);
    },
  });
}
