// Every native venue at once, from the simulator's websockets through collectors, bus, aggregator
// and chDB to /v1/coins/{id}/markets: each venue's market is listed, with its volume and last price
// recomputed here from the trades that venue's simulator sent (contracts converted to base units).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, test } from 'vitest';
import { startBookSink } from '../aggregate/bookSink.ts';
import { startTradeSink } from '../aggregate/tradeSink.ts';
import { KeyStore } from '../api/keys.ts';
import { startApi } from '../api/server.ts';
import { startCollector } from '../ingest/collector.ts';
import type { Collector } from '../ingest/collectorKit.ts';
import { isSimulatedVenue, startSimulator } from '../simulator/simulator.ts';
import { nativeVenues } from '../ingest/venues/registry.ts';
import { createMemoryBus } from '../infra/bus/memoryBus.ts';
import { findVenue } from '../infra/catalog/catalog.ts';
import { loadConfig } from '../infra/config.ts';
import { createLogger } from '../infra/log.ts';
import { migrate } from '../infra/migrate.ts';
import { openStore } from '../infra/store.ts';
import { until } from './support/until.ts';

const dir = mkdtempSync(join(tmpdir(), 'mds-venues-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const relClose = (actual: number, expected: number) => expect(Math.abs(actual / expected - 1)).toBeLessThan(1e-9);

test('every native venue through the whole pipeline: /v1/coins/bitcoin/markets lists each with its own volume and price', async () => {
  const ids = nativeVenues.map((v) => v.id);
  const simulated = ids.filter(isSimulatedVenue);
  expect(simulated).toEqual(ids);
  const sim = await startSimulator({ venues: simulated, seed: 20261123, tickers: ['BTC', 'ETH', 'SOL'], tradesPerSecondPerMarket: 4 });
  const config = loadConfig({ MDS_DATA_DIR: dir, PORT: '0', LOG_LEVEL: 'silent', AGGREGATE_BATCH_MS: '100' });
  const log = createLogger('silent');
  const store = await openStore(config);
  await migrate(store);
  const bus = createMemoryBus();
  const sink = await startTradeSink({ bus, store, log, batchRows: 1_000, batchMs: 100 });
  const bookSink = await startBookSink({ bus, store, log, everyMs: 500 });
  const collectors: Collector[] = [];
  for (const venue of nativeVenues)
    collectors.push(await startCollector({ venue, endpoints: sim.endpoints(venue.id as (typeof simulated)[number]), bus, log }));
  const { key } = await new KeyStore(store).create('venues-pipeline-test');
  const api = await startApi({ store, config, log });

  // Until every collector follows its bitcoin markets, each has had more than 5 trades sent and its book measured.
  const bitcoinMarkets = () => collectors.flatMap((c) => c.markets().filter((x) => x.asset === 'bitcoin').map((x) => ({ venue: c.venue.id as (typeof simulated)[number], symbol: x.symbol })));
  const measured = async () =>
    new Set((await store.rows<{ key: string }>("SELECT DISTINCT concat(venue, ' ', market) AS key FROM market_quality WHERE asset = 'bitcoin'")).map((r) => r.key));
  const ready = async () => {
    const markets = bitcoinMarkets();
    const books = await measured();
    return (
      new Set(markets.map((m) => m.venue)).size === ids.length &&
      markets.every((m) => sim.venue(m.venue).trades.since(0).filter((t) => t.symbol === m.symbol).length > 5 && books.has(`${m.venue} ${m.symbol}`))
    );
  };
  await until(ready, 'trades and a measured book on every bitcoin market of every venue', {
    timeoutMs: 30_000,
    context: () => JSON.stringify(bitcoinMarkets()),
  });
  for (const c of collectors) await c.stop();
  await bus.flush();
  await sink.stop();
  await bookSink.stop();

  const res = await fetch(`${api.url}/v1/coins/bitcoin/markets`, { headers: { 'x-api-key': key } });
  expect(res.status).toBe(200);
  const { markets } = (await res.json()) as { markets: { venueId: string; venue: string; quote: string; contract: string; price: number; updatedAt: number; volume24h: number; share: number; spreadBps: number | null }[] };
  // Every bitcoin market every collector follows, once (a venue may list several: Deribit's linear and inverse perpetuals).
  const followed = collectors.flatMap((c) => c.markets().filter((x) => x.asset === 'bitcoin').map((x) => `${c.venue.id} ${x.quote}`));
  expect(markets.map((m) => `${m.venueId} ${m.quote}`).sort()).toEqual(followed.sort());
  expect(new Set(markets.map((m) => m.venueId))).toEqual(new Set(ids));

  const total = markets.reduce((s, m) => s + m.volume24h, 0);
  for (const m of markets) {
    const collector = collectors.find((c) => c.venue.id === m.venueId)!;
    const btc = collector.markets().find((x) => x.asset === 'bitcoin' && x.quote === m.quote)!;
    const simMarket = sim.venue(m.venueId as (typeof simulated)[number]).listing.markets.find((x) => x.symbol === btc.symbol)!;
    const sent = sim.venue(m.venueId as (typeof simulated)[number]).trades.since(0).filter((t) => t.symbol === btc.symbol);
    expect(sent.length, m.venueId).toBeGreaterThan(5);
    const last = [...sent].sort((a, b) => a.time - b.time || (String(a.id) < String(b.id) ? -1 : 1)).at(-1)!;
    expect(m, m.venueId).toMatchObject({ venue: findVenue(m.venueId)!.name, contract: findVenue(m.venueId)!.contract, price: Number(last.price), updatedAt: last.time });
    // Quote volume: price × base quantity; an inverse contract is worth contractSize quote units whatever the price.
    const notional = (t: (typeof sent)[number]) => (simMarket.inverse ? Number(t.qty) * simMarket.contractSize : Number(t.price) * Number(t.qty) * simMarket.contractSize);
    relClose(m.volume24h, sent.reduce((s, t) => s + notional(t), 0));
    relClose(m.share, m.volume24h / total);
    expect(m.spreadBps, `${m.venueId} book quality`).toBeGreaterThan(0);
  }

  await api.close();
  await bus.close();
  await store.close();
  await sim.close();
}, 60_000);
