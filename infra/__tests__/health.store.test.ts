// /health, /ready and /metrics as an operator reaches them, over a real store and the in-process bus.
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { openTestStore } from '../../test/support/harness.ts';
import { createMemoryBus } from '../bus/memoryBus.ts';
import { localView, observeRequests, opsRouter, type ReadinessCheck } from '../health.ts';
import { createMetrics, observeBus, observeStore } from '../metrics.ts';

let db: Awaited<ReturnType<typeof openTestStore>>;
beforeAll(async () => {
  db = await openTestStore();
});
afterAll(async () => {
  await db?.dispose();
});

async function serve(router: express.Router, observe?: express.RequestHandler): Promise<{ url: string; close(): void }> {
  const app = express();
  if (observe) app.use(observe);
  app.use(router);
  const server = app.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => server.close() };
}

test('/health answers; /ready is 503 naming the failing check and 200 once every check passes', async () => {
  let ingesting = false;
  const checks: ReadinessCheck[] = [
    { name: 'store', check: async () => (await db.store.rows('SELECT 1'), { ok: true }) },
    { name: 'ingestion', check: () => (ingesting ? { ok: true } : { ok: false, reason: 'no trade inserted yet' }) },
    // A check that never answers fails on its own timeout instead of holding /ready.
    { name: 'hangs', check: () => (ingesting ? { ok: true } : new Promise<never>(() => {})) },
  ];
  const metrics = createMetrics();
  const server = await serve(opsRouter({ view: localView(metrics, () => checks), access: { hosts: { allowedHosts: [] } } }));
  try {
    expect((await fetch(`${server.url}/health`)).status).toBe(200);
    let res = await fetch(`${server.url}/ready`);
    expect(res.status).toBe(503);
    const body = (await res.json()) as { status: string; checks: Record<string, { ok: boolean; reason?: string }> };
    expect(body.status).toBe('not_ready');
    expect(body.checks.store).toEqual({ ok: true });
    expect(body.checks.ingestion).toEqual({ ok: false, reason: 'no trade inserted yet' });
    expect(body.checks.hangs).toEqual({ ok: false, reason: 'no answer within 3000 ms' });
    ingesting = true;
    res = await fetch(`${server.url}/ready`);
    expect(res.status).toBe(200);
    expect(((await res.json()) as { status: string }).status).toBe('ready');
  } finally {
    server.close();
  }
});

test('/metrics: the bus, the store and the requests, counted from what really happened; a token when configured', async () => {
  const metrics = createMetrics();
  const bus = createMemoryBus({ maxRecordsPerTopic: 3 });
  observeBus(metrics, bus);
  const { store, activity } = observeStore(metrics, db.store);
  // 5 trades into a topic nobody reads with a bound of 3: 3 held, 2 refused.
  const trade = (i: number) => ({ type: 'trade' as const, venue: 'v', market: 'M', asset: 'bitcoin', quote: 'USD', tradeId: String(i), price: 1, quantity: 1, side: 'buy' as const, ts: 1_700_000_000_000, receivedAt: 1_700_000_000_000 });
  await bus.subscribe({ group: 'stuck', topics: ['trades'], onBatch: async () => new Promise(() => {}) });
  bus.publish([0, 1, 2, 3, 4].map(trade));
  await store.insert('trades', [0, 1].map((i) => ({ venue: 'v', market: 'M', asset: 'bitcoin', quote: 'USD', trade_id: String(i), ts: 1_700_000_000_000, received_at: 1_700_000_000_000, price: 1, quantity: 1, side: 'buy' })));
  await expect(store.insert('no_such_table', [{ a: 1 }])).rejects.toThrow();
  expect(activity.lastInsertAt('trades')).toBeGreaterThan(Date.now() - 60_000);

  const token = 'a-metrics-token-of-some-length';
  const server = await serve(opsRouter({ view: localView(metrics, () => []), access: { token, hosts: { allowedHosts: [] } } }), observeRequests(metrics));
  try {
    expect((await fetch(`${server.url}/metrics`)).status).toBe(403);
    await fetch(`${server.url}/health`);
    const res = await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${token}` } });
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).toContain('mds_bus_dropped_total{topic="trades"} 2');
    expect(text).toContain('mds_bus_held_records{topic="trades"} 3');
    expect(text).toContain('mds_bus_lag_records{group="stuck",topic="trades"} 3');
    expect(text).toContain('mds_store_inserted_rows_total{table="trades"} 2');
    expect(text).toContain('mds_store_insert_failures_total{table="no_such_table"} 1');
    expect(text).toMatch(/mds_store_last_insert_timestamp_seconds\{table="trades"\} \d+/);
    expect(text).toContain('mds_http_requests_total{route="/health",status="200"} 1');
    expect(text).toContain('nodejs_eventloop_lag_p99_seconds');
    expect(text).toContain('process_resident_memory_bytes');
  } finally {
    server.close();
    await bus.close();
  }
});

test('store calls in flight: counted while they run, per table for inserts, and no longer once answered or failed (a hung store shows as calls that stay)', async () => {
  const metrics = createMetrics();
  const answers: { settle(ok: boolean): void }[] = [];
  const held = () => new Promise<never>((resolve, reject) => answers.push({ settle: (ok) => (ok ? resolve(undefined as never) : reject(new Error('refused'))) }));
  const { store } = observeStore(metrics, { ...db.store, insert: held, rows: held });
  const inFlight = async (name: string) => (await metrics.registry.getSingleMetric(name)!.get()).values.map((v) => ({ labels: v.labels, value: v.value }));
  const calls = [store.insert('trades', []), store.insert('trades', []), store.insert('market_quality', []), store.rows('SELECT 1')];
  expect(await inFlight('mds_store_inserts_in_flight')).toEqual([
    { labels: { table: 'trades' }, value: 2 },
    { labels: { table: 'market_quality' }, value: 1 },
  ]);
  expect(await inFlight('mds_store_queries_in_flight')).toEqual([{ labels: {}, value: 1 }]);
  answers[0]!.settle(true);
  answers[2]!.settle(false);
  answers[3]!.settle(false);
  await Promise.allSettled([calls[0], calls[2], calls[3]]);
  expect(await inFlight('mds_store_inserts_in_flight')).toEqual([
    { labels: { table: 'trades' }, value: 1 },
    { labels: { table: 'market_quality' }, value: 0 },
  ]);
  expect(await inFlight('mds_store_queries_in_flight')).toEqual([{ labels: {}, value: 0 }]);
  answers[1]!.settle(true);
  await calls[1];
  expect((await inFlight('mds_store_inserts_in_flight'))[0]).toEqual({ labels: { table: 'trades' }, value: 0 });
});

test('loopback clients reach /metrics without a token', async () => {
  const metrics = createMetrics();
  const server = await serve(opsRouter({ view: localView(metrics, () => []), access: { hosts: { allowedHosts: [] } } }));
  try {
    expect((await fetch(`${server.url}/metrics`)).status).toBe(200);
  } finally {
    server.close();
  }
});
