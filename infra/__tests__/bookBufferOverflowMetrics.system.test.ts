// A venue whose REST book snapshots never come (ingest/bookSync.ts buffers its diffs meanwhile, at
// most 5,000): every time a book's buffer starts over is counted per venue, in the collector's
// metrics, in /metrics (infra/roles/ingest.ts) and on the status page's venue row
// (api/status/processStatus.ts). The real collector reads the simulator's Binance over a socket;
// only its depth snapshots are refused. The expected count is the collector's log lines, one per
// overflow.
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterEach, expect, test, vi } from 'vitest';
import { startCollector } from '../../ingest/collector.ts';
import type { Collector } from '../../ingest/collectorKit.ts';
import { venueIo } from '../../ingest/venueIo.ts';
import { findNativeVenue } from '../../ingest/venues/registry.ts';
import { until } from '../../test/support/until.ts';
import { ProcessStatusReader } from '../../api/status/processStatus.ts';
import { localView } from '../health.ts';
import { startSimulator, type Simulator } from '../../simulator/simulator.ts';
import { createMetrics } from '../metrics.ts';
import { observeCollectors } from '../roles/ingest.ts';

let running: { collector: Collector; sim: Simulator } | undefined;
afterEach(async () => {
  vi.restoreAllMocks();
  await running?.collector.stop();
  await running?.sim.close();
  running = undefined;
});

test('book buffers started over while snapshots are refused: each one counted for the venue, in /metrics and on the status page', async () => {
  const lines: { msg: string; symbol?: string; bufferOverflows?: number }[] = [];
  const log = pino({ level: 'warn' }, new Writable({ write: (chunk, _enc, done) => (lines.push(JSON.parse(String(chunk))), done()) }));
  // A book diff per market every millisecond: 5,000 of them pile up in seconds.
  const sim = await startSimulator({ seed: 51, venues: ['binance'], tickers: ['BTC'], tickMs: 1, tradesPerSecondPerMarket: 0 });
  const getJson = venueIo.getJson;
  vi.spyOn(venueIo, 'getJson').mockImplementation((url) => (new URL(url).pathname === '/api/v3/depth' ? Promise.reject(new Error('HTTP 503')) : getJson(url)));
  const collector = await startCollector({ venue: findNativeVenue('binance')!, endpoints: sim.endpoints('binance'), bus: { publish: () => {} }, log });
  running = { collector, sim };
  const metrics = createMetrics();
  observeCollectors({ metrics, checks: [] }, () => [collector.metrics()]);

  const overflowLines = () => lines.filter((l) => l.msg === 'book buffer full before its snapshot came: started over');
  await until(() => overflowLines().length >= 2, 'two buffer overflows', 60_000);
  sim.pause();
  // What the socket still held when the market stopped has reached the collector: nothing for 300 ms.
  await until(() => Date.now() - (collector.metrics().lastMessageAt ?? 0) >= 300, 'the paused venue to fall silent', { context: () => JSON.stringify(collector.metrics()) });
  const logged = overflowLines();
  // Each line carries its book's own count so far: per market they run 1, 2, 3, ...
  const symbols = [...new Set(logged.map((l) => l.symbol))];
  for (const symbol of symbols) {
    const counts = logged.filter((l) => l.symbol === symbol).map((l) => l.bufferOverflows);
    expect(counts, symbol).toEqual(counts.map((_, i) => i + 1));
  }

  expect(collector.metrics().bookBufferOverflows).toBe(logged.length);
  // Not a resync: no book was discarded.
  expect(collector.metrics().resyncs).toBe(0);
  const scraped = await metrics.registry.getSingleMetric('mds_venue_book_buffer_overflows_total')!.get();
  expect(scraped.values.map((v) => [v.labels, v.value])).toEqual([[{ venue: 'binance' }, logged.length]]);
  const status = await new ProcessStatusReader(localView(metrics, () => [])).read(Date.now());
  expect(status.venues.get('binance')).toMatchObject({ bookBufferOverflows: logged.length, resyncs: 0 });
}, 90_000);
