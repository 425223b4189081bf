// The ccxt collector against simulated long-tail venues, offline: markets injected from the
// fixtures (no loadMarkets call), ccxt's websocket URLs pointed at the simulator, and every REST
// call made to fail loudly. Expected values are recomputed from what the simulator says it sent.
import type { Exchange } from 'ccxt';
import { afterEach, describe, expect, test } from 'vitest';
import { marketEvent, type BookEvent, type LiquidationEvent, type MarketEvent, type TradeEvent } from '../../infra/events.ts';
import { createLogger } from '../../infra/log.ts';
import { startCcxtCollector, type CcxtCollector, type CcxtTuning } from '../ccxtCollector.ts';
import { bitget } from '../../simulator/ccxt/bitget.ts';
import { cryptocom } from '../../simulator/ccxt/cryptocom.ts';
import { lighter } from '../../simulator/ccxt/lighter.ts';
import { poloniex } from '../../simulator/ccxt/poloniex.ts';
import { startCcxtSimulator, type CcxtSimVenue, type CcxtSimulator } from '../../simulator/ccxt/simulator.ts';
import { whitebit } from '../../simulator/ccxt/whitebit.ts';
import { woo } from '../../simulator/ccxt/woo.ts';
import type { SimMarket } from '../../simulator/market.ts';
import type { SentTrade } from '../../simulator/venueServer.ts';
import { findCcxtVenue } from '../venues/registry.ts';
import { sleep, until } from './liveVenue.ts';

interface Live {
  sim: CcxtSimulator;
  collector: CcxtCollector;
  events: MarketEvent[];
  /** REST URLs ccxt tried to fetch (each one failed). */
  rest: string[];
  /** Every trade the simulator sent, as its onTradeSent hook reported it (registered before the collector connected). */
  sentTrades: SentTrade[];
}

let running: Live[] = [];
afterEach(async () => {
  for (const { collector, sim } of running) {
    await collector.stop();
    await sim.close();
  }
  running = [];
});

async function startLive(
  id: string,
  simVenue: CcxtSimVenue,
  options: { seed: number; tuning?: Partial<CcxtTuning>; unthrottled?: boolean; listed?: () => readonly Record<string, unknown>[] },
): Promise<Live> {
  const venue = findCcxtVenue(id);
  if (!venue) throw new Error(`no ccxt venue ${id}`);
  const sim = await startCcxtSimulator(simVenue, { seed: options.seed, tradesPerSecondPerMarket: 5, liquidationsPerSecondPerMarket: 3 });
  const sentTrades: SentTrade[] = [];
  sim.server.onTradeSent((t) => sentTrades.push(t));
  const events: MarketEvent[] = [];
  const rest: string[] = [];
  const collector = await startCcxtCollector({
    venue,
    bus: { publish: (e) => void events.push(...e) },
    log: createLogger('silent'),
    tuning: { bookEveryMs: 100, backoff: { baseMs: 50, maxMs: 500 }, ...options.tuning },
    // What the collector lists (the venue's REST listing in production); the simulator serves every fixture market.
    markets: options.listed ?? simVenue.markets,
    configure(exchange: Exchange) {
      simVenue.pointAt(exchange, sim.server.wsUrl);
      exchange.fetchImplementation = (url: string) => {
        rest.push(url);
        throw new Error(`REST call in an offline test: ${url}`);
      };
      // ccxt paces some venues' subscriptions at their REST rate (Lighter: one a second): not what is tested here.
      if (options.unthrottled) exchange.enableRateLimit = false;
    },
  });
  const live = { sim, collector, events, rest, sentTrades };
  running.push(live);
  await collector.ready();
  return live;
}

const significant = (n: number) => Number(n.toPrecision(12));
const trades = (events: readonly MarketEvent[]) => events.filter((e): e is TradeEvent => e.type === 'trade');
const liquidations = (events: readonly MarketEvent[]) => events.filter((e): e is LiquidationEvent => e.type === 'liquidation');
const books = (events: readonly MarketEvent[]) => events.filter((e): e is BookEvent => e.type === 'book');
const sorted = <T extends readonly unknown[]>(rows: T[]) => rows.map((r) => JSON.stringify(r)).sort();

/** The venue's book in base units, best first: what the collector's book must equal. */
function simBook(m: SimMarket, side: 'bid' | 'ask', depth: number): [number, number][] {
  return [...(side === 'bid' ? m.bids : m.asks)]
    .map(([p, q]): [number, number] => [Number(p), significant(Number(q) * m.contractSize)])
    .sort((a, b) => (side === 'bid' ? b[0] - a[0] : a[0] - b[0]))
    .slice(0, depth);
}

function expectBooksEqualVenue(live: Live, symbols: readonly string[], depth: number): void {
  for (const symbol of symbols) {
    const last = books(live.events).filter((b) => b.market === symbol).at(-1);
    expect(last, `a book of ${symbol}`).toBeDefined();
    const m = live.sim.server.listing.markets.find((x) => x.symbol === symbol)!;
    expect(last!.bids.map(([p, q]) => [p, significant(q)]), symbol).toEqual(simBook(m, 'bid', depth));
    expect(last!.asks.map(([p, q]) => [p, significant(q)]), symbol).toEqual(simBook(m, 'ask', depth));
  }
}

interface VenueCase {
  id: string;
  sim: CcxtSimVenue;
  /** Market ids followed: the fixture's markets of the venue's kind, followed quote and catalogued base. */
  markets: string[];
  unmapped: string[];
  /** Levels per side the venue streams (WhiteBIT: the subscribed top 10). */
  depth: number;
  liquidations?: boolean;
  unthrottled?: boolean;
}

const spot = (format: (t: string) => string) => ['BTC', 'ETH', 'SOL', 'XRP', 'DOGE', 'PEPE'].map(format);
const cases: VenueCase[] = [
  { id: 'bitget', sim: bitget, markets: spot((t) => `${t}USDT`), unmapped: ['RONUSDT'], depth: 50 },
  { id: 'cryptocom', sim: cryptocom, markets: spot((t) => `${t}_USDT`), unmapped: ['RON_USDT'], depth: 50 },
  { id: 'whitebit', sim: whitebit, markets: spot((t) => `${t}_USDT`), unmapped: ['RON_USDT'], depth: 10 },
  { id: 'poloniex', sim: poloniex, markets: spot((t) => `${t}_USDT`), unmapped: ['RON_USDT'], depth: 50 },
  { id: 'woo-swap', sim: woo, markets: spot((t) => `PERP_${t}_USDT`), unmapped: ['PERP_RON_USDT'], depth: 50 },
  { id: 'lighter-swap', sim: lighter, markets: ['0', '1', '2', '3', '7'], unmapped: ['4'], depth: 50, liquidations: true, unthrottled: true },
];

describe.each(cases)('$id through ccxt against its simulated protocol', (c) => {
  test('every trade (and liquidation) sent arrives once, exactly, with its catalog asset; every book equals the venue book; no REST call', async () => {
    const live = await startLive(c.id, c.sim, { seed: 21, ...(c.unthrottled ? { unthrottled: true } : {}) });
    const { sim, collector, events } = live;
    expect(collector.markets().map((m) => m.symbol)).toEqual(c.markets);
    expect(collector.unmapped()).toEqual(c.unmapped);
    await until(() => trades(events).length >= 40, 'trades');
    sim.pause();
    await sleep(400);
    const metrics = collector.metrics();
    await collector.stop();

    const followed = new Set(c.markets);
    // The trade ids as the simulator's onTradeSent hook gives them: derived from the content where the venue sends none (WOO X).
    const sent = live.sentTrades.filter((s) => followed.has(s.market));
    expect(sent.map((s) => s.trade)).toEqual(sim.server.trades.since(0).filter((t) => followed.has(t.symbol)));
    const contractSize = new Map(sim.server.listing.markets.map((m) => [m.symbol, m.contractSize]));
    const expected = sent.map(({ trade: t, tradeId }) => [t.symbol, tradeId, Number(t.price), significant(Number(t.qty) * contractSize.get(t.symbol)!), t.side, t.time] as const);
    const got = trades(events).map((t) => [t.market, t.tradeId, t.price, significant(t.quantity), t.side, t.ts] as const);
    expect(sorted([...got])).toEqual(sorted([...expected]));
    const assets = new Map(collector.markets().map((m) => [m.symbol, { venue: c.id, asset: m.asset, quote: m.quote }]));
    for (const e of events) {
      expect(marketEvent.parse(e)).toEqual(e);
      expect(e).toMatchObject(assets.get(e.market)!);
    }
    expect(assets.get(c.markets[0]!)?.asset).toBe(c.id === 'lighter-swap' ? 'ethereum' : 'bitcoin');

    const sentLiquidations = sim.server.liquidations.since(0).filter((l) => followed.has(l.symbol));
    if (c.liquidations) expect(sentLiquidations.length).toBeGreaterThan(3);
    expect(sorted(liquidations(events).map((l) => [l.market, l.positionSide, l.price, significant(l.quantity), l.ts]))).toEqual(
      sorted(sentLiquidations.map((l) => [l.symbol, l.positionSide, Number(l.price), significant(Number(l.qty)), l.time])),
    );

    expectBooksEqualVenue(live, c.markets, c.depth);
    expect(metrics).toMatchObject({
      venue: c.id,
      connected: true,
      markets: c.markets.length,
      unmappedMarkets: c.unmapped.length,
      trades: got.length,
      liquidations: liquidations(events).length,
      reconnects: 0,
      resyncs: 0,
      unknownMessages: 0,
      venueErrors: 0,
    });
    expect(metrics.messages).toBeGreaterThan(got.length / 10);
    expect(metrics.lastMessageAgeMs).toBeLessThan(2_000);
    expect(live.rest).toEqual([]);
  });
});

test('re-listing: a market listed later is watched from then on, a delisted one is published as such and no longer watched', async () => {
  let listed = poloniex.markets.filter((m) => m.id !== 'SOL_USDT');
  const live = await startLive('poloniex', poloniex, { seed: 24, tuning: { marketsRefreshMs: 200 }, listed: () => listed });
  const { sim, collector, events } = live;
  const symbolsNow = () => collector.markets().map((m) => m.symbol);
  expect(symbolsNow()).not.toContain('SOL_USDT');
  await until(() => trades(events).length > 20, 'first trades');
  await sleep(500);
  expect(trades(events).filter((t) => t.market === 'SOL_USDT')).toEqual([]);

  // The venue lists SOL and delists ETH: one refresh applies both.
  listed = poloniex.markets.filter((m) => m.id !== 'ETH_USDT');
  await until(() => trades(events).some((t) => t.market === 'SOL_USDT'), 'trades of the market listed later');
  const delistedAt = events.findIndex((e) => e.type === 'status' && e.market === 'ETH_USDT' && e.delisted === true);
  expect(delistedAt).toBeGreaterThanOrEqual(0);
  expect(events[delistedAt]).toMatchObject({ venue: 'poloniex', asset: 'ethereum', connected: false });
  expect(symbolsNow()).toEqual(['BTC_USDT', 'XRP_USDT', 'DOGE_USDT', 'PEPE_USDT', 'SOL_USDT']);

  // The venue's socket still carries ETH (ccxt does not unsubscribe): its trades are sent, none is published.
  const sentAfter = live.sentTrades.length;
  await until(() => live.sentTrades.slice(sentAfter).filter((t) => t.market === 'ETH_USDT').length >= 5 && live.sentTrades.slice(sentAfter).some((t) => t.market === 'SOL_USDT'), 'trades sent after the change');
  sim.pause();
  await sleep(400);
  const metrics = collector.metrics();
  await collector.stop();
  const afterDelisting = events.slice(delistedAt + 1);
  expect(afterDelisting.filter((e) => e.market === 'ETH_USDT')).toEqual([]);
  // Every SOL trade sent since its first one published arrived, once.
  const firstSol = trades(events).find((t) => t.market === 'SOL_USDT')!;
  const sentSol = live.sentTrades.filter((t) => t.market === 'SOL_USDT' && t.trade.time >= firstSol.ts).map((t) => t.tradeId);
  const gotSol = trades(events).filter((t) => t.market === 'SOL_USDT').map((t) => t.tradeId);
  expect(gotSol.length).toBeGreaterThan(0);
  expect(gotSol.filter((id) => sentSol.includes(id))).toEqual(sentSol);
  expect(new Set(gotSol).size).toBe(gotSol.length);
  expect(books(afterDelisting).filter((b) => b.market === 'SOL_USDT').length).toBeGreaterThan(0);
  expect(metrics).toMatchObject({ markets: 5, venueErrors: 0, unknownMessages: 0 });
});

test('quantities in contracts are converted to base units with the market contract size', async () => {
  // WOO X's perpetuals count in base units; here the simulated venue counts BTC in contracts of 0.01.
  const sim = { ...woo, markets: woo.markets.map((m) => (m.id === 'PERP_BTC_USDT' ? { ...m, contractSize: 0.01 } : m)) };
  const { sim: server, collector, events } = await startLive('woo-swap', sim, { seed: 22 });
  await until(() => trades(events).filter((t) => t.market === 'PERP_BTC_USDT').length >= 5, 'BTC trades');
  server.pause();
  await sleep(300);
  await collector.stop();
  const sent = server.server.trades.since(0).filter((t) => t.symbol === 'PERP_BTC_USDT');
  expect(server.server.listing.markets.find((m) => m.symbol === 'PERP_BTC_USDT')?.contractSize).toBe(0.01);
  const got = trades(events).filter((t) => t.market === 'PERP_BTC_USDT');
  expect(got.map((t) => significant(t.quantity)).sort()).toEqual(sent.map((t) => significant(Number(t.qty) / 100)).sort());
});

test('a dropped socket is redialled and resubscribed, with backoff; trades sent after it all arrive', async () => {
  const live = await startLive('poloniex', poloniex, { seed: 23 });
  const { sim, collector, events } = live;
  await until(() => collector.metrics().trades > 20, 'first trades');
  sim.server.faults.dropConnections();
  await until(() => collector.metrics().reconnects >= 1 && collector.metrics().connected, 'reconnect');
  const sentBefore = sim.server.trades.count;
  await until(() => sim.server.trades.count > sentBefore + 20, 'trades after the reconnect');
  sim.pause();
  await sleep(400);
  await collector.stop();
  const got = new Set(trades(events).map((t) => `${t.market}/${t.tradeId}`));
  for (const t of sim.server.trades.since(sentBefore)) expect(got.has(`${t.symbol}/${t.id}`), `${t.symbol}/${t.id}`).toBe(true);
  expectBooksEqualVenue(live, ['BTC_USDT', 'PEPE_USDT'], 50);
  expect(collector.metrics()).toMatchObject({ reconnects: 1, resyncs: 0, unknownMessages: 0 });
  // Each market's trade watcher said: streaming, lost, streaming again.
  for (const m of collector.markets()) {
    const said = events.filter((e) => e.type === 'status' && e.market === m.symbol).map((e) => (e.type === 'status' ? e.connected : undefined));
    expect(said, m.symbol).toEqual([true, false, true]);
  }
});

test('Bitget: a bad book checksum makes ccxt resubscribe that book; the resync is counted and the book recovers', async () => {
  const live = await startLive('bitget', bitget, { seed: 24 });
  const { sim, collector, events } = live;
  await until(() => books(events).some((b) => b.market === 'ETHUSDT'), 'a first book');
  sim.server.faults.skipSequence('ETHUSDT');
  await until(() => collector.metrics().resyncs >= 1, 'resync');
  const atResync = Date.now();
  await until(() => books(events).some((b) => b.market === 'ETHUSDT' && b.receivedAt > atResync), 'a book after the resync');
  sim.pause();
  await sleep(400);
  await collector.stop();
  expectBooksEqualVenue(live, ['ETHUSDT', 'BTCUSDT'], 50);
  // ccxt unsubscribed and subscribed the one book again on the same socket.
  expect(collector.metrics()).toMatchObject({ resyncs: 1, reconnects: 0, unknownMessages: 0, venueErrors: 0 });
});

test('Crypto.com: a book update that does not follow the last one is a counted resync; a new connection brings a fresh snapshot', async () => {
  const live = await startLive('cryptocom', cryptocom, { seed: 25 });
  const { sim, collector, events } = live;
  await until(() => books(events).some((b) => b.market === 'SOL_USDT'), 'a first book');
  sim.server.faults.skipSequence('SOL_USDT');
  await until(() => collector.metrics().resyncs >= 1 && collector.metrics().reconnects >= 1, 'resync');
  const atResync = Date.now();
  await until(() => books(events).some((b) => b.market === 'SOL_USDT' && b.receivedAt > atResync), 'a book after the resync');
  sim.pause();
  await sleep(400);
  await collector.stop();
  expectBooksEqualVenue(live, ['SOL_USDT', 'BTC_USDT'], 50);
  // ccxt's Crypto.com class keeps the broken subscription: the collector redials to get a snapshot.
  expect(collector.metrics()).toMatchObject({ resyncs: 1, reconnects: 1, unknownMessages: 0 });
});

test('a frame that is not JSON is counted as unknown and changes nothing else', async () => {
  const { sim, collector } = await startLive('whitebit', whitebit, { seed: 26 });
  await until(() => collector.metrics().trades > 10, 'first trades');
  sim.server.faults.garbage();
  const before = collector.metrics().trades;
  await until(() => collector.metrics().trades > before + 10, 'trades after the garbage');
  expect(collector.metrics()).toMatchObject({ unknownMessages: 1, reconnects: 0, venueErrors: 0, connected: true });
});

test('without injected markets the venue REST listing is asked for, and in a test it fails loudly and is retried', async () => {
  const rest: string[] = [];
  const collector = await startCcxtCollector({
    venue: findCcxtVenue('bitget')!,
    bus: { publish: () => undefined },
    log: createLogger('silent'),
    tuning: { backoff: { baseMs: 20, maxMs: 40 } },
    configure(exchange) {
      exchange.fetchImplementation = (url: string) => {
        rest.push(url);
        throw new Error('REST call in an offline test');
      };
    },
  });
  await until(() => rest.length >= 2, 'two listing attempts');
  await collector.stop();
  expect(rest[0]).toMatch(/^https:\/\/api\.bitget\.com\//);
  expect(collector.markets()).toEqual([]);
  expect(collector.metrics()).toMatchObject({ connected: false, markets: 0, messages: 0 });
});
