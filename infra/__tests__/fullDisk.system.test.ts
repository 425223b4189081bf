// A real full disk under the embedded store: its data directory on a 128 MB tmpfs that another file
// fills to the last byte. Inserts fail and are retried with nothing committed, the `disk` check
// fails; once the file is gone every trade is stored once and the candles roll from all of them
// (a view that missed a block would show here). The tmpfs needs root, as CI and test/run.sh have.
import { execFileSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { startTradeSink } from '../../aggregate/tradeSink.ts';
import { createMemoryBus } from '../../infra/bus/memoryBus.ts';
import type { TradeEvent } from '../../infra/events.ts';
import { openTestStore, silentLog } from '../../test/support/harness.ts';
import { until } from '../../test/support/until.ts';
import { watchDiskSpace } from '../diskSpace.ts';
import { readiness, type ReadinessCheck } from '../health.ts';
import { createMetrics } from '../metrics.ts';
import type { Store } from '../store.ts';

const mount = mkdtempSync(join(tmpdir(), 'mds-full-disk-'));
const filler = join(mount, 'filler');
let store: Store;
let dispose: (() => Promise<void>) | undefined;
let mounted = false;

beforeAll(async () => {
  execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=128m', 'tmpfs', mount]);
  mounted = true;
  ({ store, dispose } = await openTestStore(mount));
});
afterAll(async () => {
  await dispose?.();
  if (mounted) execFileSync('umount', [mount]);
  rmSync(mount, { recursive: true, force: true });
});

/** Writes `path` until the file system refuses a single byte more. */
function fillDisk(path: string): void {
  const fd = openSync(path, 'w');
  try {
    for (const size of [1 << 20, 1 << 14, 1 << 10, 1]) {
      const chunk = Buffer.alloc(size, 1);
      try {
        for (;;) writeSync(fd, chunk);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOSPC') throw err;
      }
    }
  } finally {
    closeSync(fd);
  }
}

test('a full disk: inserts fail and are retried, /ready names the disk; once space is back every trade is stored once and its candles hold them all', async () => {
  const checks: ReadinessCheck[] = [];
  watchDiskSpace({ store, metrics: createMetrics(), checks, minFreeBytes: 8 * 1024 * 1024 });
  expect((await readiness(checks)).ready).toBe(true);

  const bus = createMemoryBus();
  const sink = await startTradeSink({ bus, store, log: silentLog, batchRows: 1_000, batchMs: 50 });
  const t0 = Date.UTC(2026, 10, 28, 6, 0, 0);
  const sent: TradeEvent[] = Array.from({ length: 600 }, (_, i) => ({
    type: 'trade', venue: 'binance', market: 'SOLUSDT', asset: 'solana', quote: 'USDT', tradeId: String(10_000 + i),
    price: 150 + (i % 17) / 10, quantity: 1 + (i % 7), side: i % 2 ? 'buy' : 'sell', ts: t0 + i * 300, receivedAt: t0 + i * 300 + 5,
  }));

  fillDisk(filler);
  const full = await readiness(checks);
  expect(full.ready).toBe(false);
  expect(full.checks.disk!.reason).toMatch(/MB free on the store's disk, below the 8 MB kept for merges/);
  bus.publish(sent);
  await until(() => sink.stats().failedBatches >= 2, 'inserts to fail on the full disk (and be tried again)', 60_000);
  const stored = async () => (await store.rows<{ n: number }>("SELECT count() AS n FROM trades WHERE asset = 'solana'"))[0]!.n;
  expect(Number(await stored())).toBe(0);

  rmSync(filler);
  await until(async () => Number(await stored()) === sent.length, 'every trade stored once the disk has room', 60_000);
  await sink.stop();
  await bus.close();
  expect((await readiness(checks)).ready).toBe(true);
  expect(sink.stats()).toMatchObject({ inserted: sent.length, duplicates: 0 });

  // The 1m candles, recomputed from the events sent: no block of trades missed by the views.
  const expected = new Map<number, { volume: number; trades: number }>();
  for (const t of sent) {
    const bucket = Math.floor(t.ts / 60_000) * 60_000;
    const c = expected.get(bucket) ?? { volume: 0, trades: 0 };
    c.volume += t.quantity;
    c.trades += 1;
    expected.set(bucket, c);
  }
  const candles = await store.rows<{ bucket: number; volume: number; trades: number }>(
    `SELECT toUnixTimestamp(bucket) * 1000 AS bucket, sum(volume) AS volume, sum(trade_count) AS trades
     FROM candles_1m WHERE asset = 'solana' GROUP BY bucket ORDER BY bucket`,
  );
  expect(candles.map((c) => [Number(c.bucket), Number(c.volume), Number(c.trades)])).toEqual([...expected].map(([b, c]) => [b, c.volume, c.trades]));
}, 180_000);
