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
import { until } from './support/until.ts';
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

/** A book side as the simulator holds it (decimal strings), best level first. */
function sideOf(levels: ReadonlyMap<string, string>, side: 'bid' | 'ask'): [number, number][] {
  return [...levels].map(([p, q]): [number, number] => [Number(p), Number(q)]).filter(([, q]) => q > 0).sort(([a], [b]) => (side === 'bid' ? b - a : a - b));
}

/** Spread and depth of a book, by their definitions (spread in bps of the mid; depth = value of the levels within 1 % and 2 % of it). */
function bookQuality(bids: [number, number][], asks: [number, number][]) {
  const mid = (bids[0]![0] + asks[0]![0]) / 2;
  const value = (levels: [number, number][], inside: (p: number) => boolean) => levels.filter(([p]) => inside(p)).reduce((sum, [p, q]) => sum + p * q, 0);
  return {
    spreadBps: ((asks[0]![0] - bids[0]![0]) / mid) * 10_000,
    depthBid1: value(bids, (p) => p >= mid * 0.99),
    depthBid: value(bids, (p) => p >= mid * 0.98),
  };
}

/** Binance's trades on the index's quotes (USD, USDT, USDC) of catalog assets, as the simulator sent them so far. */
const indexTradesOf = (sim: Awaited<ReturnType<typeof startSimulator>>) =>
  sim.venue('binance').trades.since(0).filter((t) => ['USDT', 'USDC', 'USD'].includes(t.quote) && assetIdForVenueTicker('binance', t.base));

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

  // Until what the checks below need has happened: trades on the index's markets, of each asset the
  // prices are checked for (on a loaded machine the first 200 can all be of others), index rows, a
  // measured bitcoin book.
  const indexTradesSent = () => indexTradesOf(sim).length;
  const assets = ['bitcoin', 'ethereum', 'solana'];
  const checkedAssetsTraded = () => {
    const traded = new Set(indexTradesOf(sim).map((t) => assetIdForVenueTicker('binance', t.base)));
    return assets.every((a) => traded.has(a));
  };
  /** The latest measure of binance's bitcoin book, once there is one. */
  const storedBook = async () =>
    (
      await store.rows<{ spreadBps: number; depthBid1: number; depthBid: number }>(
        `SELECT argMax(spread_bps, ts) AS spreadBps, argMax(depth_bid_1, ts) AS depthBid1, argMax(depth_bid_2, ts) AS depthBid
         FROM market_quality WHERE venue = 'binance' AND market = 'BTCUSDT' HAVING count() > 0`,
      )
    )[0];
  await until(async () => indexTradesSent() > 200 && checkedAssetsTraded() && index.stats().rows > 0 && (await storedBook()) !== undefined, 'trades, index rows and a measured bitcoin book', {
    timeoutMs: 30_000,
    context: () => `${indexTradesSent()} trades sent, index ${JSON.stringify(index.stats())}`,
  });
  // The market stops (no trade, no book change): the book the simulator holds now is the one measured last.
  sim.pause();
  const simBtc = sim.venue('binance').listing.markets.find((m) => m.symbol === 'BTCUSDT')!;
  const book = bookQuality(sideOf(simBtc.bids, 'bid'), sideOf(simBtc.asks, 'ask'));
  let lastStored: Awaited<ReturnType<typeof storedBook>>;
  const same = (a: number, b: number) => Math.abs(a / b - 1) < 1e-9;
  await until(
    async () => {
      lastStored = await storedBook();
      return same(lastStored!.spreadBps, book.spreadBps) && same(lastStored!.depthBid1, book.depthBid1) && same(lastStored!.depthBid, book.depthBid);
    },
    'the stopped book measured',
    { timeoutMs: 10_000, context: () => `the simulator's book: ${JSON.stringify(book)}; the latest stored: ${JSON.stringify(lastStored)}` },
  );
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
  const sent: Trade[] = indexTradesOf(sim).map((t) => ({ asset: assetIdForVenueTicker('binance', t.base)!, id: t.id, price: Number(t.price), qty: Number(t.qty), time: t.time }));
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
    // With less than a day of history, against the oldest second: the first with a price.
    expect(p.change24h).toBeCloseTo((latest.price / expected[0]!.price - 1) * 100, 6);
  }

  // /v1/coins/{id}/ohlc: 1m and 5m candles, open/close by (trade time, trade id).
  for (const [interval, ms] of [['1m', 60_000], ['5m', 300_000]] as const) {
    const mine = sent.filter((t) => t.asset === 'bitcoin').sort((a, b) => a.time - b.time || (String(a.id) < String(b.id) ? -1 : 1));
    const buckets = new Map<number, Trade[]>();
    for (const t of mine) {
      const b = Math.floor(t.time / ms) * ms;
      buckets.set(b, [...(buckets.get(b) ?? []), t]);
    }
    const askedAt = Date.now();
    const body = await get(`/v1/coins/bitcoin/ohlc?interval=${interval}`);
    const answeredAt = Date.now();
    expect(body).toMatchObject({ currency: 'usd', rate: 1 });
    const traded = [...buckets.keys()];
    expect(body.candles.slice(0, traded.length).map((c: { timestamp: number }) => c.timestamp)).toEqual(traded);
    // Gapless up to the interval that held the request: after the last traded one, its close again, with volume 0.
    const lastBucket = traded.at(-1)!;
    const lastClose = buckets.get(lastBucket)!.at(-1)!.price;
    const tail = body.candles.slice(traded.length);
    expect(tail).toEqual(tail.map((_: unknown, i: number) => ({ timestamp: lastBucket + (i + 1) * ms, open: lastClose, high: lastClose, low: lastClose, close: lastClose, volume: 0 })));
    expect(lastBucket + tail.length * ms).toBeGreaterThanOrEqual(Math.floor(askedAt / ms) * ms);
    expect(lastBucket + tail.length * ms).toBeLessThanOrEqual(Math.floor(answeredAt / ms) * ms);
    for (const c of body.candles.slice(0, traded.length)) {
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
  // The book the simulator held when it stopped, measured here (USDT at par: no USDT/USD market traded).
  relClose(markets[0].spreadBps, book.spreadBps);
  relClose(markets[0].depthBid1, book.depthBid1);
  relClose(markets[0].depthBid, book.depthBid);
  expect(markets[0].depthBid).toBeGreaterThanOrEqual(markets[0].depthBid1);

  await api.close();
  await bus.close();
  await store.close();
  await sim.close();
}, 60_000);
