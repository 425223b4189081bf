// The collectors of the embedded service in a worker thread (infra/roles/ingestWorker.ts), against
// the simulator over real sockets: their events reach this thread's bus, their metrics and
// readiness are this process's, and stopping loses no event the collectors counted.
import { pino } from 'pino';
import { expect, test } from 'vitest';
import { createMemoryBus } from '../bus/memoryBus.ts';
import type { GapEvent } from '../events.ts';
import { createMetrics } from '../metrics.ts';
import { startIngestWorker } from '../roles/ingest.ts';
import { Lifecycle } from '../roles/lifecycle.ts';
import type { RoleContext } from '../roles/context.ts';
import { findNativeVenue } from '../../ingest/venues/registry.ts';
import { startSimulator } from '../../simulator/simulator.ts';
import { silentLog, testConfig } from '../../test/support/harness.ts';
import { until, untilValue } from '../../test/support/until.ts';

/** Sum of a sampled series over its labels, as a scrape of /metrics would read it. */
async function metricSum(ctx: RoleContext, name: string): Promise<number> {
  const metric = await ctx.metrics.registry.getSingleMetric(name)!.get();
  return metric.values.reduce((s, v) => s + v.value, 0);
}

test('events reach the bus of the parent thread, metrics and readiness are reported, and a stop loses nothing', async () => {
  const venues = ['binance', 'okx'] as const;
  const sim = await startSimulator({ seed: 41, venues: [...venues], tickers: ['BTC', 'ETH', 'SOL'], tradesPerSecondPerMarket: 40 });
  // This thread's log, at debug: the stop gives the collectors' thread (nice 10) the process's priority back.
  const lines: { msg: string; from?: number; to?: number }[] = [];
  const log = pino({ level: 'debug' }, { write: (s: string) => void lines.push(JSON.parse(s) as (typeof lines)[number]) });
  const ctx: RoleContext = { config: testConfig(), log, life: new Lifecycle(silentLog), metrics: createMetrics(), checks: [] };
  const bus = createMemoryBus();
  const trades = new Map<string, number>();
  let books = 0;
  const gaps: GapEvent[] = [];
  const sub = await bus.subscribe({
    group: 'test',
    topics: ['trades', 'books', 'gaps'],
    onBatch: async (records) => {
      for (const { event } of records) {
        if (event.type === 'trade') trades.set(event.venue, (trades.get(event.venue) ?? 0) + 1);
        else if (event.type === 'gap') gaps.push(event);
        else books += 1;
      }
    },
  });
  const ingest = await startIngestWorker(ctx, bus, { venues: venues.map((id) => findNativeVenue(id)!), ccxtVenues: [], assets: undefined, endpointsOf: (v) => sim.endpoints(v.id as (typeof venues)[number]) });

  const collectorsCheck = () => ctx.checks.find((c) => c.name === 'collectors')!.check();
  await until(async () => (await metricSum(ctx, 'mds_venue_connected')) === venues.length, 'both venues connected, as the metrics say', 30_000);
  expect(await collectorsCheck()).toMatchObject({ ok: true, connected: 2, disconnected: [] });
  await until(() => [...trades.values()].reduce((a, b) => a + b, 0) > 300 && books > 0, 'trades and books on the bus', 30_000);

  // A gap an earlier run left (watchLateGaps hands it over): the worker's collector of that venue
  // recovers it from the venue's history and ends it under its id, after the versions it had.
  // Its span: trades the simulator printed of one Binance market (a span before the simulator's start would hold none).
  const printedOf: { market: string; ts: number }[] = [];
  const stopPrinted = sim.onTradePrinted((t) => t.venue === 'binance' && printedOf.push({ market: t.market, ts: t.trade.time }));
  const market = await untilValue(() => printedOf[0]?.market, 'a Binance trade printed');
  const span = await untilValue(() => {
    const own = printedOf.filter((t) => t.market === market);
    return own.length >= 20 ? { from: own[4]!.ts, to: own[19]!.ts } : undefined;
  }, 'twenty trades of the market printed');
  stopPrinted();
  ingest.resume('binance', [{ symbol: market, cause: 'restart', gapId: 'earlier-run', versionBase: 1, after: { ts: span.from - 1 }, until: { ts: span.to } }]);
  const ended = await untilValue(() => gaps.find((g) => g.gapId === 'earlier-run' && g.state !== 'open'), 'the handed gap ended', 30_000);
  expect(ended).toMatchObject({ venue: 'binance', market, version: 3, state: 'recovered' });
  expect(ended.recovered).toBeGreaterThan(0);

  // The worker's own heap (its isolate, not this thread's): used within total, and its limit, reported.
  const heapOf = async () => (await ctx.metrics.registry.getSingleMetric('mds_thread_heap_bytes')!.get()).values.filter((v) => v.labels.thread === 'ingest');
  const heap = Object.fromEntries((await heapOf()).map((v) => [v.labels.kind, v.value]));
  expect(heap.used).toBeGreaterThan(1e6);
  expect(heap.total).toBeGreaterThanOrEqual(heap.used!);
  // Outside its heap: the buffers its sockets and parsers hold, and V8's own working memory.
  expect(heap.external).toBeGreaterThan(0);
  expect(heap.malloced).toBeGreaterThan(0);
  // Its limit: THREAD_HEAP_MB (512 by default) of old generation, plus V8's young generation.
  expect(ctx.config.THREAD_HEAP_MB).toBe(512);
  expect(heap.limit).toBeGreaterThanOrEqual(512 * 1_048_576);
  expect(heap.limit).toBeLessThanOrEqual((512 + 256) * 1_048_576);

  // Stopped while the venues still send: every trade the collectors counted is on the bus by then.
  await ctx.life.shutdown('test');
  // As root (CI) the thread may be raised back; elsewhere it stays where it was.
  expect(lines.find((l) => l.msg === "the collectors' thread stops at the process's priority")).toMatchObject({ from: 10, to: process.getuid?.() === 0 ? 0 : undefined });
  // A stopped worker is left out of the scrape.
  expect(await heapOf()).toEqual([]);
  await sub.stop();
  const counted = await ctx.metrics.registry.getSingleMetric('mds_venue_trades_total')!.get();
  for (const id of venues) {
    const published = counted.values.find((v) => v.labels.venue === id)?.value;
    expect(published, id).toBeGreaterThan(0);
    expect(trades.get(id), id).toBe(published);
  }
  await sim.close();
}, 90_000);
