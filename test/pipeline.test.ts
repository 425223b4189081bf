// The whole embedded pipeline, from the simulator's websocket to the API: the expected candles
// and prices are recomputed here from the trades the simulator sent, and compared exactly.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, test } from 'vitest';
import { startTradeSink } from '../aggregate/tradeSink.ts';
import { startBookSink } from '../aggregate/bookSink.ts';
import { KeyStore } from '../api/keys.ts';
import { startApi } from '../api/server.ts';
import { startCollector } from '../ingest/collector.ts';
import { startBinanceSimulator } from '../ingest/simulator/binanceServer.ts';
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
  const sim = await startBinanceSimulator({ port: 0, seed: 20261122, tradesPerSecondPerAsset: 4 });
  const config = loadConfig({
    MDS_DATA_DIR: dir,
    PORT: '0',
    LOG_LEVEL: 'silent',
    VENUE_BINANCE_WS_URL: sim.wsUrl,
    VENUE_BINANCE_REST_URL: sim.restUrl,
    AGGREGATE_BATCH_MS: '100',
  });
  const log = createLogger('silent');
  const store = await openStore(config);
  await migrate(store);
  const bus = createMemoryBus();
  const sink = await startTradeSink({ bus, store, log, batchRows: 1_000, batchMs: 100 });
  const bookSink = await startBookSink({ bus, store, log, everyMs: 500 });
  const collector = await startCollector({ venue: 'binance', config, bus, log });
  const api = await startApi({ store, config, log });
  const { key } = await new KeyStore(store).create('pipeline-test');

  await new Promise((r) => setTimeout(r, 5_000));
  await collector.stop();
  await bus.flush();
  await sink.stop();
  await bookSink.stop();

  // Every trade the simulator sent on a USD-quoted market of a catalog asset.
  const sent: Trade[] = sim.trades
    .filter((t) => ['USDT', 'USDC', 'USD'].includes(t.quoteAsset) && assetIdForVenueTicker('binance', t.baseAsset))
    .map((t) => ({ asset: assetIdForVenueTicker('binance', t.baseAsset)!, id: t.id, price: Number(t.price), qty: Number(t.qty), time: t.time }));
  expect(sent.length).toBeGreaterThan(200);
  const [{ n }] = (await store.rows<{ n: number }>("SELECT count() AS n FROM trades WHERE venue = 'binance'")) as [{ n: number }];
  expect(n).toBe(sent.length);

  const get = async (path: string) => {
    const res = await fetch(api.url + path, { headers: { 'x-api-key': key } });
    expect(res.status).toBe(200);
    return res.json() as Promise<any>;
  };

  // /v1/prices: the VWAP of each asset's latest second with trades.
  const assets = ['bitcoin', 'ethereum', 'solana'];
  const prices = await get(`/v1/prices?ids=${assets.join(',')}`);
  expect(prices.prices.map((p: { assetId: string }) => p.assetId).sort()).toEqual([...assets].sort());
  for (const p of prices.prices) {
    const mine = sent.filter((t) => t.asset === p.assetId);
    const lastSecond = Math.max(...mine.map((t) => Math.floor(t.time / 1000)));
    const inSecond = mine.filter((t) => Math.floor(t.time / 1000) === lastSecond);
    const vwap = inSecond.reduce((s, t) => s + t.price * t.qty, 0) / inSecond.reduce((s, t) => s + t.qty, 0);
    relClose(p.price, vwap);
    expect(p.updatedAt).toBe(Math.max(...inSecond.map((t) => t.time)));
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
  expect(markets[0]).toMatchObject({ venueId: 'binance', pair: 'BTC/USDT', price: last.price, updatedAt: last.time, share: 1 });
  relClose(markets[0].volume24h, btc.reduce((s, t) => s + t.price * t.qty, 0));
  expect(markets[0].spreadBps).toBeGreaterThan(0);
  expect(markets[0].depthBid1).toBeGreaterThan(0);
  expect(markets[0].depthBid).toBeGreaterThanOrEqual(markets[0].depthBid1);

  await api.close();
  await bus.close();
  await store.close();
  await sim.close();
}, 60_000);
