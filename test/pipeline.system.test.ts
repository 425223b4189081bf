// The whole embedded pipeline, from the simulator's websocket to the API: the expected candles
// and prices are recomputed here from the trades the simulator sent, and compared exactly (index
// prices through the reference recomputation, aggregate/__tests__/indexReference.ts).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, test } from 'vitest';
import { startTradeSink } from '../aggregate/tradeSink.ts';
import { startBookSink } from '../aggregate/bookSink.ts';
import { defaultIndexParams } from '../aggregate/indexPrice.ts';
import { defaultIndexSchedule, indexSettingsFromConfig, startIndexRunner } from '../aggregate/indexRunner.ts';
import { expectTicks, storedTicks } from '../aggregate/__tests__/indexCheck.ts';
import { referenceTicks } from '../aggregate/__tests__/indexReference.ts';
import { computeIndex } from './support/harness.ts';
import { KeyStore } from '../api/keys.ts';
import { startApi } from '../api/server.ts';
import { startCollector } from '../ingest/collector.ts';
import { startSimulator } from '../simulator/simulator.ts';
import { binance } from '../ingest/venues/binance.ts';
import { createMemoryBus } from '../infra/bus/memoryBus.ts';
import { assetIdForVenueTicker } from '../infra/catalog/catalog.ts';
import { loadConfig } from '../infra/config.ts';
import { createLogger } from '../infra/log.ts';
import { migrate } from '../infra/migrate.ts';
import { openStore } from '../infra/store.ts';

const dir = mkdtempSync(join(tmpdir(), 'mds-pipeline-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface Trade {
  asset: string;
  id: number;
  price: number;
  qty: number;
  time: number;
}

const relClose = (actual: number, expected: number) => expect(Math.abs(actual / expected - 1)).toBeLessThan(1e-9);

test('simulator -> collector -> bus -> aggregator -> chDB -> API, numbers recomputed from the sent trades', async () => {
  const sim = await startSimulator({ venues: ['binance'], seed: 20261122, tradesPerSecondPerMarket: 4 });
  const config = loadConfig({
    MDS_DATA_DIR: dir,
    PORT: '0',
    LOG_LEVEL: 'silent',
    AGGREGATE_BATCH_MS: '100',
  });
  const log = createLogger('silent');
  const store = await openStore(config);
  await migrate(store);
  const bus = createMemoryBus();
  const sink = await startTradeSink({ bus, store, log, batchRows: 1_000, batchMs: 100 });
  const bookSink = await startBookSink({ bus, store, log, everyMs: 500 });
  const collector = await startCollector({ venue: binance, endpoints: sim.endpoints('binance'), bus, log });
  // The index runner of the aggregate role, on the real clock.
  const index = startIndexRunner({ store, log, ...indexSettingsFromConfig(config) });
  const { key } = await new KeyStore(store).create('pipeline-test');
  const api = await startApi({ store, config, log });

  await new Promise((r) => setTimeout(r, 5_000));
  await collector.stop();
  await bus.flush();
  await sink.stop();
  await bookSink.stop();
  await index.stop();
  expect(index.stats()).toMatchObject({ failures: 0 });
  expect(index.stats().rows).toBeGreaterThan(0);
  // Then every second up to 3 s after the last trade: what the runner would have computed by then.
  const indexNow = Date.now() + 3_000 + defaultIndexSchedule.lagMs;
  await computeIndex(store, indexNow);

  // Every trade the simulator sent on a USD-quoted market of a catalog asset.
  const sent: Trade[] = sim
    .venue('binance')
    .trades.since(0)
    .filter((t) => ['USDT', 'USDC', 'USD'].includes(t.quote) && assetIdForVenueTicker('binance', t.base))
    .map((t) => ({ asset: assetIdForVenueTicker('binance', t.base)!, id: t.id, price: Number(t.price), qty: Number(t.qty), time: t.time }));
  expect(sent.length).toBeGreaterThan(200);
  const [{ n }] = (await store.rows<{ n: number }>("SELECT count() AS n FROM trades WHERE venue = 'binance'")) as [{ n: number }];
  expect(n).toBe(sent.length);

  const get = async (path: string) => {
    const res = await fetch(api.url + path, { headers: { 'x-api-key': key } });
    expect(res.status).toBe(200);
    return res.json() as Promise<any>;
  };

  // /v1/prices: the index price of the last second computed, recomputed from every trade the simulator sent.
  const raw = sim.venue('binance').trades.since(0).flatMap((t) => {
    const asset = assetIdForVenueTicker('binance', t.base);
    return asset ? [{ venue: 'binance', market: t.symbol, asset, quote: t.quote, trade_id: String(t.id), ts: t.time, price: Number(t.price), quantity: Number(t.qty) }] : [];
  });
  const lastSecond = Math.floor((indexNow - defaultIndexSchedule.lagMs) / 1000) - 1;
  const firstSecond = Math.floor(Math.min(...raw.map((t) => t.ts)) / 1000);
  const assets = ['bitcoin', 'ethereum', 'solana'];
  const prices = await get(`/v1/prices?ids=${assets.join(',')}`);
  expect(prices.prices.map((p: { assetId: string }) => p.assetId).sort()).toEqual([...assets].sort());
  for (const p of prices.prices) {
    const expected = referenceTicks(raw, p.assetId, firstSecond, lastSecond, { params: defaultIndexParams });
    expectTicks(await storedTicks(store, p.assetId), expected, firstSecond, lastSecond);
    const latest = expected.at(-1)!;
    // One venue: its market is the index.
    expect(latest).toMatchObject({ second: lastSecond, status: 'single_venue' });
    relClose(p.price, latest.price);
    expect(p.updatedAt).toBe(latest.lastTradeAt);
    expect(p.measured).toBe(true);
    expect(typeof p.change24h).toBe('number');
  }

  // /v1/coins/{id}/ohlc: 1m and 5m candles, open/close by (trade time, trade id).
  for (const [interval, ms] of [['1m', 60_000], ['5m', 300_000]] as const) {
    const mine = sent.filter((t) => t.asset === 'bitcoin').sort((a, b) => a.time - b.time || (String(a.id) < String(b.id) ? -1 : 1));
    const buckets = new Map<number, Trade[]>();
    for (const t of mine) {
      const b = Math.floor(t.time / ms) * ms;
      buckets.set(b, [...(buckets.get(b) ?? []), t]);
    }
    const body = await get(`/v1/coins/bitcoin/ohlc?interval=${interval}`);
    expect(body).toMatchObject({ currency: 'usd', rate: 1 });
    expect(body.candles.map((c: { timestamp: number }) => c.timestamp)).toEqual([...buckets.keys()]);
    for (const c of body.candles) {
      const ts = buckets.get(c.timestamp)!;
      expect(c.open).toBe(ts[0]!.price);
      expect(c.close).toBe(ts.at(-1)!.price);
      expect(c.high).toBe(Math.max(...ts.map((t) => t.price)));
      expect(c.low).toBe(Math.min(...ts.map((t) => t.price)));
      relClose(c.volume, ts.reduce((s, t) => s + t.qty, 0));
    }
  }

  // /v1/coins/{id}/markets: the venue's market with its 24 h volume and the quality of its book.
  const { markets } = await get('/v1/coins/bitcoin/markets');
  expect(markets).toHaveLength(1);
  const btc = sent.filter((t) => t.asset === 'bitcoin');
  const last = [...btc].sort((a, b) => a.time - b.time || a.id - b.id).at(-1)!;
  expect(markets[0]).toMatchObject({ venueId: 'binance', pair: 'BTC/USDT', price: last.price, updatedAt: last.time, share: 1, excluded: false, excludeReason: null });
  relClose(markets[0].volume24h, btc.reduce((s, t) => s + t.price * t.qty, 0));
  expect(markets[0].spreadBps).toBeGreaterThan(0);
  expect(markets[0].depthBid1).toBeGreaterThan(0);
  expect(markets[0].depthBid).toBeGreaterThanOrEqual(markets[0].depthBid1);

  await api.close();
  await bus.close();
  await store.close();
  await sim.close();
}, 60_000);
