// The real collector over real websockets, against the simulator on loopback.
import { afterEach, expect, test } from 'vitest';
import type { BookEvent, MarketEvent, TradeEvent } from '../../infra/events.ts';
import { loadConfig } from '../../infra/config.ts';
import { createLogger } from '../../infra/log.ts';
import { startCollector, type Collector } from '../collector.ts';
import { startBinanceSimulator, type BinanceSimulator } from '../simulator/binanceServer.ts';

let sim: BinanceSimulator | undefined;
let collector: Collector | undefined;
afterEach(async () => {
  await collector?.stop();
  await sim?.close();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
async function until(cond: () => boolean, what: string, ms = 15_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(25);
  }
}

async function start(seed: number) {
  sim = await startBinanceSimulator({ port: 0, seed, tradesPerSecondPerAsset: 5 });
  const config = loadConfig({ VENUE_BINANCE_WS_URL: sim.wsUrl, VENUE_BINANCE_REST_URL: sim.restUrl, LOG_LEVEL: 'silent' });
  const events: MarketEvent[] = [];
  collector = await startCollector({ venue: 'binance', config, bus: { publish: (e) => void events.push(...e) }, log: createLogger('silent') });
  await collector.ready();
  return { sim, collector, events };
}

const trades = (events: MarketEvent[]) => events.filter((e): e is TradeEvent => e.type === 'trade');

test('every trade the venue sent arrives once, exactly; every market publishes a synced book', async () => {
  const { sim, collector, events } = await start(11);
  expect(collector.markets()).toHaveLength(34); // every USDT market, not ETHBTC
  await sleep(2_500);
  await collector.stop();
  const sent = sim.trades;
  expect(sent.length).toBeGreaterThan(100);
  expect(trades(events).map((t) => [t.market, t.tradeId, t.price, t.quantity, t.side, t.ts])).toEqual(
    sent.map((t) => [t.symbol, String(t.id), Number(t.price), Number(t.qty), t.isBuyerMaker ? 'sell' : 'buy', t.time]),
  );
  const books = events.filter((e): e is BookEvent => e.type === 'book');
  expect(new Set(books.map((b) => b.market)).size).toBe(34);
  for (const b of books) {
    expect(b.bids.length).toBeGreaterThan(10);
    expect(b.bids[0]![0]).toBeLessThan(b.asks[0]![0]);
  }
  expect(collector.metrics()).toMatchObject({ resyncs: 0, unknownMessages: 0 });
});

test('a dropped socket reconnects and resubscribes; a sequence gap forces a counted resync', async () => {
  const { sim, collector, events } = await start(12);
  await until(() => collector.metrics().trades > 20, 'first trades');
  sim.dropConnections();
  await until(() => collector.metrics().reconnects >= 1 && collector.metrics().connected, 'reconnect');
  const sentBefore = sim.trades.length;
  await until(() => sim.trades.length > sentBefore + 20, 'trades after the reconnect');
  sim.injectGap('BTCUSDT');
  await until(() => collector.metrics().resyncs >= 1, 'resync');
  const atResync = events.length;
  // Books are published only while synced: a BTC book after the gap means the resync completed.
  await until(() => events.slice(atResync).some((e) => e.type === 'book' && e.market === 'BTCUSDT'), 'BTC book after the resync');
  await collector.stop();
  // Trades sent after the reconnect all arrived (the simulator records only what it sent to a subscriber).
  const got = new Set(trades(events).map((t) => `${t.market}/${t.tradeId}`));
  for (const t of sim.trades.slice(sentBefore)) expect(got.has(`${t.symbol}/${t.id}`)).toBe(true);
});
