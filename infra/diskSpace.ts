import { Gauge } from 'prom-client';
import type { CheckResult, ReadinessCheck } from './health.ts';
import type { Metrics } from './metrics.ts';
import { recentReading, storeGaugeMaxAgeMs } from './recentReading.ts';
import type { StoreCalls } from './store.ts';

/**
 * The free space of the store's disk, as the store itself reports it (system.disks), so that it is
 * the same reading for embedded chDB (its data directory's file system) and a ClickHouse server
 * (the server's disks, not this host's). Of several disks, the one with the least free space.
 */
export interface DiskSpace {
  freeBytes: number;
  totalBytes: number;
}

export async function readDiskSpace(store: StoreCalls): Promise<DiskSpace> {
  const [row] = await store.rows<{ freeBytes: number; totalBytes: number }>(
    'SELECT free_space AS freeBytes, total_space AS totalBytes FROM system.disks ORDER BY free_space LIMIT 1',
  );
  if (!row) throw new Error('the store lists no disk (system.disks is empty)');
  return row;
}

const mb = 1024 * 1024;

/** STORE_MIN_FREE_MB in bytes: the one conversion, for the readiness check and the `measured` rule alike. */
export const minFreeBytes = (config: { STORE_MIN_FREE_MB: number }) => config.STORE_MIN_FREE_MB * mb;

/** `disk` of /ready: ok while the store's disk has at least `minFree` bytes free (room for merges). */
export function diskCheck(space: DiskSpace, minFree: number): CheckResult {
  const result: CheckResult = { ok: space.freeBytes >= minFree, freeMb: Math.floor(space.freeBytes / mb), totalMb: Math.floor(space.totalBytes / mb) };
  if (!result.ok) result.reason = `${result.freeMb as number} MB free on the store's disk, below the ${Math.round(minFree / mb)} MB kept for merges (STORE_MIN_FREE_MB)`;
  return result;
}

/**
 * Registers the store's disk with the operator: gauges `mds_store_disk_free_bytes` and
 * `mds_store_disk_total_bytes` (one query for both, at most every storeGaugeMaxAgeMs whatever the
 * scrape rate; a failed read makes them NaN, unknown, rather than failing /metrics or reading as an
 * empty disk), and the `disk` readiness check, which reads the disk each time it is asked.
 */
export function watchDiskSpace(options: { store: StoreCalls; metrics: Metrics; checks: ReadinessCheck[]; minFreeBytes: number }): void {
  const { store, metrics, checks } = options;
  // Both gauges are collected together at a scrape: they share one reading.
  const reading = recentReading(() => readDiskSpace(store), storeGaugeMaxAgeMs);
  const read = () => reading().catch(() => undefined);
  const gauge = (name: string, help: string, field: keyof DiskSpace) =>
    new Gauge({
      name,
      help,
      registers: [metrics.registry],
      async collect() {
        const space = await read();
        this.set(space ? space[field] : NaN);
      },
    });
  gauge('mds_store_disk_free_bytes', "Free bytes on the store's disk (the fullest, if several). Alert well before STORE_MIN_FREE_MB.", 'freeBytes');
  gauge('mds_store_disk_total_bytes', "Size in bytes of the store's disk (the fullest, if several).", 'totalBytes');
  checks.push({ name: 'disk', check: async () => diskCheck(await readDiskSpace(store), options.minFreeBytes) });
}
