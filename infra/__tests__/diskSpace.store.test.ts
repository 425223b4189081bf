// The store's disk as the operator sees it: the gauges and the `disk` readiness check report the
// free space of the store's data directory (recomputed here with statfs), the check fails below
// STORE_MIN_FREE_MB naming the figures and the setting, and a fresh price is then not `measured`.
import { statfsSync } from 'node:fs';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { latestIndexPrices, measuredRule } from '../../aggregate/indexPrices/latestIndexPrices.ts';
import { countingQueries, openTestStore, testConfig } from '../../test/support/harness.ts';
import { minFreeBytes, watchDiskSpace } from '../diskSpace.ts';
import { readiness, type ReadinessCheck } from '../health.ts';
import { createMetrics } from '../metrics.ts';

let db: Awaited<ReturnType<typeof openTestStore>>;
beforeAll(async () => (db = await openTestStore()));
afterAll(async () => db?.dispose());

const mb = 1024 * 1024;
/** Other processes write to the same file system meanwhile. */
const toleranceBytes = 512 * mb;

/** Free and total bytes of the data directory's file system, as an unprivileged writer gets them. */
function statfsOf(dir: string) {
  const s = statfsSync(dir);
  return { free: s.bavail * s.bsize, total: s.blocks * s.bsize };
}

/** A value of a gauge without labels in Prometheus text. */
function gaugeValue(text: string, name: string): number {
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  expect(line, name).toBeDefined();
  return Number(line!.slice(name.length + 1));
}

function watched(minFreeMb: number) {
  const config = testConfig({ STORE_MIN_FREE_MB: String(minFreeMb) });
  const metrics = createMetrics();
  const checks: ReadinessCheck[] = [];
  watchDiskSpace({ store: db.store, metrics, checks, minFreeBytes: minFreeBytes(config) });
  return { config, metrics, checks };
}

test('the gauges and the disk check report the free space of the store data directory', async () => {
  const { metrics, checks } = watched(0);
  const text = await metrics.registry.metrics();
  const disk = statfsOf(db.dir);
  expect(Math.abs(gaugeValue(text, 'mds_store_disk_free_bytes') - disk.free)).toBeLessThan(toleranceBytes);
  expect(gaugeValue(text, 'mds_store_disk_total_bytes')).toBe(disk.total);
  expect(text).toContain('# HELP mds_store_disk_free_bytes');

  const { ready, checks: results } = await readiness(checks);
  expect(ready).toBe(true);
  expect(results.disk).toMatchObject({ ok: true, totalMb: Math.floor(disk.total / mb) });
  expect(Math.abs((results.disk!.freeMb as number) - disk.free / mb)).toBeLessThan(toleranceBytes / mb);
});

test('scrapes closer together than the gauges\' age ask the store once; the readiness check reads each time', async () => {
  const metrics = createMetrics();
  const checks: ReadinessCheck[] = [];
  const counting = countingQueries(db.store);
  watchDiskSpace({ store: counting.store, metrics, checks, minFreeBytes: 0 });
  const first = await metrics.registry.metrics();
  const second = await metrics.registry.metrics();
  expect(counting.count()).toBe(1);
  expect(gaugeValue(second, 'mds_store_disk_total_bytes')).toBe(gaugeValue(first, 'mds_store_disk_total_bytes'));
  await readiness(checks);
  await readiness(checks);
  expect(counting.count()).toBe(3);
});

test('below STORE_MIN_FREE_MB: the check fails naming the free space, the margin and the setting, and a fresh price is not measured', async () => {
  // A margin above what the disk has free (and more than others could free meanwhile).
  const freeMb = Math.floor(statfsOf(db.dir).free / mb);
  const marginMb = freeMb + 1024 * 1024;
  const { config, checks } = watched(marginMb);
  const { ready, checks: results } = await readiness(checks);
  expect(ready).toBe(false);
  expect(results.disk!.ok).toBe(false);
  expect(results.disk!.reason).toMatch(new RegExp(`^\\d+ MB free on the store's disk, below the ${marginMb} MB kept for merges \\(STORE_MIN_FREE_MB\\)$`));
  expect(Math.abs(Number(/^(\d+) MB/.exec(results.disk!.reason!)![1]) - freeMb)).toBeLessThan(toleranceBytes / mb);

  // A price from trades, its last trade 3 s old: measured with room on the disk, not without.
  const now = Date.now();
  const second = Math.floor(now / 1000) - 5;
  await db.store.insert('index_ticks', [{
    asset: 'bitcoin', second, price: 100_000, status: 'ok', constituents: ['binance:BTCUSDT'], excluded: {},
    volume: 1, volume_usd: 100_000, trade_count: 1, last_trade_at: now - 3_000, computed_at: now,
  }]);
  const roomy = await latestIndexPrices(db.store, ['bitcoin'], now, measuredRule(testConfig({ STORE_MIN_FREE_MB: '0' })));
  expect(roomy.get('bitcoin')).toMatchObject({ price: 100_000, updatedAt: now - 3_000, measured: true });
  const full = await latestIndexPrices(db.store, ['bitcoin'], now, measuredRule(config));
  expect(full.get('bitcoin')).toMatchObject({ price: 100_000, updatedAt: now - 3_000, measured: false });
  // The default margin, 1024 MB: as this disk's free space says.
  expect((await latestIndexPrices(db.store, ['bitcoin'], now)).get('bitcoin')!.measured).toBe(freeMb >= 1024);
});
