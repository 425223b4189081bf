// The live-socket checks every native venue passes: the real collector, over real websockets,
// against the simulator speaking that venue's protocol on loopback. Expected values are
// recomputed here from what the simulator says it sent.
import { afterEach, describe, expect, test } from 'vitest';
import type { BookEvent, LiquidationEvent, MarketEvent, TradeEvent } from '../../infra/events.ts';
import { createLogger, type Logger } from '../../infra/log.ts';
import { startCollector, type CollectorTuning } from '../collector.ts';
import type { Collector } from '../collectorKit.ts';
import type { SimMarket } from '../../simulator/market.ts';
import { startSimulator, type SimulatedVenueId, type Simulator, type SimulatorOptions } from '../../simulator/simulator.ts';
import type { SentTrade } from '../../simulator/venueServer.ts';
import { findNativeVenue } from '../venues/registry.ts';
import { until } from '../../test/support/until.ts';

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export { until } from '../../test/support/until.ts';

/** Fewer assets than the demo: the tests stay fast; PEPE keeps a price with many decimals in the mix. */
export const testTickers = ['BTC', 'ETH', 'SOL', 'XRP', 'DOGE', 'PEPE'];

export interface Live {
  sim: Simulator;
  collector: Collector;
  events: MarketEvent[];
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

export async function startLive(
  id: SimulatedVenueId,
  options: { seed: number; tuning?: Partial<CollectorTuning>; sim?: Partial<SimulatorOptions>; log?: Logger },
): Promise<Live> {
  const venue = findNativeVenue(id);
  if (!venue) throw new Error(`no native venue ${id}`);
  const sim = await startSimulator({
    seed: options.seed,
    venues: [id],
    tickers: testTickers,
    tradesPerSecondPerMarket: 5,
    liquidationsPerSecondPerMarket: 3,
    ...options.sim,
  });
  const sentTrades: SentTrade[] = [];
  sim.onTradeSent((t) => sentTrades.push(t));
  const events: MarketEvent[] = [];
  const collector = await startCollector({
    venue,
    endpoints: sim.endpoints(id),
    bus: { publish: (e) => void events.push(...e) },
    log: options.log ?? createLogger('silent'),
    tuning: { bookEveryMs: 100, ...options.tuning },
  });
  const live = { sim, collector, events, sentTrades };
  running.push(live);
  await collector.ready();
  return live;
}

const significant = (n: number) => Number(n.toPrecision(12));
const trades = (events: readonly MarketEvent[]) => events.filter((e): e is TradeEvent => e.type === 'trade');
const liquidations = (events: readonly MarketEvent[]) => events.filter((e): e is LiquidationEvent => e.type === 'liquidation');
const byKey = <T extends { 0: string; 1: string }>(rows: T[]) => rows.sort((a, b) => (a[0] + a[1] < b[0] + b[1] ? -1 : 1));

/** A venue quantity in base units, recomputed in floating point: inverse contracts count quote units. */
const simBase = (m: SimMarket, qty: string, price: string) => significant(m.inverse ? (Number(qty) * m.contractSize) / Number(price) : Number(qty) * m.contractSize);

/** The simulator's book of a market in base units, best first: what the collector's book must equal. */
function simBook(m: SimMarket, side: 'bid' | 'ask', depth: number): [number, number][] {
  return [...(side === 'bid' ? m.bids : m.asks)]
    .map(([p, q]): [number, number] => [Number(p), simBase(m, q, p)])
    .sort((a, b) => (side === 'bid' ? b[0] - a[0] : a[0] - b[0]))
    .slice(0, depth);
}

export interface LiveVenueCase {
  id: SimulatedVenueId;
  /** Markets the collector follows on the simulator (its quote and catalog filters applied). */
  markets: number;
  /** A market whose book stream gets a skipped sequence number. */
  gapSymbol: string;
  liquidations: boolean;
  /** Every book message is the whole book (Bitstamp): a skipped one is healed by the next, without a resync. */
  wholeBooks?: boolean;
  /** Books carry no sequence number, only a checksum of the top levels (Kraken): a skip shows only while it differs there. */
  checksumOnly?: boolean;
  /** The venue's liquidations carry no time (BitMEX): the event's `ts` is its receive time. */
  liquidationsUntimed?: boolean;
}

export function liveVenueSuite(c: LiveVenueCase): void {
  describe(`${c.id} collector against the simulated venue, over websockets`, () => {
    test('every trade and liquidation sent arrives once, exactly, in base units; every book equals the venue book', async () => {
      const { sim, collector, events, sentTrades } = await startLive(c.id, { seed: 11 });
      const venue = sim.venue(c.id);
      expect(collector.markets()).toHaveLength(c.markets);
      const ours = new Set(collector.markets().map((m) => m.symbol));
      await sleep(2_500);
      // A loaded machine's timers run late: the market trades on until enough was sent to compare.
      await until(() => venue.trades.since(0).filter((t) => ours.has(t.symbol)).length > 50, 'trades sent', 20_000);
      // A still market: the last book each market published must equal the venue's book.
      sim.pause();
      const followed = new Map(venue.listing.markets.map((m) => [m.symbol, m]));
      const books = () => events.filter((e): e is BookEvent => e.type === 'book');
      const lastBook = (symbol: string) => books().findLast((b) => b.market === symbol);
      const same = (symbol: string) => {
        const last = lastBook(symbol);
        const m = followed.get(symbol)!;
        return JSON.stringify(last?.bids.map(([p, q]) => [p, significant(q)])) === JSON.stringify(simBook(m, 'bid', 50)) &&
          JSON.stringify(last?.asks.map(([p, q]) => [p, significant(q)])) === JSON.stringify(simBook(m, 'ask', 50));
      };
      // Messages still in flight on a loaded machine: wait for the last of them (the assertions below say what differs, if anything).
      await until(() => [...ours].every(same), 'the last books', 5_000).catch(() => {});
      await collector.stop();

      const sent = venue.trades.since(0).filter((t) => ours.has(t.symbol));
      expect(sent.length).toBeGreaterThan(50);
      // The hook's identity of each sent trade is the one the collector stores (venue, market, trade id).
      const identity = (rows: { venue: string; market: string; tradeId: string }[]) => rows.map((t) => `${t.venue}/${t.market}/${t.tradeId}`).sort();
      expect(identity(trades(events))).toEqual(identity(sentTrades.filter((t) => ours.has(t.market))));
      const expected = sent.map((t) => [t.symbol, String(t.id), Number(t.price), simBase(followed.get(t.symbol)!, t.qty, t.price), t.side, t.time] as const);
      const got = trades(events).map((t) => [t.market, t.tradeId, t.price, significant(t.quantity), t.side, t.ts] as const);
      expect(byKey([...got])).toEqual(byKey([...expected]));
      const catalogued = new Map(collector.markets().map((m) => [m.symbol, { venue: c.id, asset: m.asset, quote: m.quote }]));
      for (const e of [...trades(events), ...liquidations(events)]) expect(e).toMatchObject(catalogued.get(e.market)!);

      const sentLiquidations = venue.liquidations.since(0).filter((l) => ours.has(l.symbol));
      if (c.liquidations) expect(sentLiquidations.length).toBeGreaterThan(3);
      const expectedLiquidations = sentLiquidations.map((l) => [l.symbol, l.positionSide, Number(l.price), simBase(followed.get(l.symbol)!, l.qty, l.price), c.liquidationsUntimed ? 0 : l.time] as const);
      const gotLiquidations = liquidations(events).map((l) => [l.market, l.positionSide, l.price, significant(l.quantity), c.liquidationsUntimed ? 0 : l.ts] as const);
      if (c.liquidationsUntimed) for (const l of liquidations(events)) expect(l.ts).toBe(l.receivedAt);
      expect(byKey([...gotLiquidations])).toEqual(byKey([...expectedLiquidations]));

      for (const symbol of ours) {
        const last = lastBook(symbol);
        expect(last, `a book of ${symbol}`).toBeDefined();
        const m = followed.get(symbol)!;
        expect(last!.bids.map(([p, q]) => [p, significant(q)])).toEqual(simBook(m, 'bid', 50));
        expect(last!.asks.map(([p, q]) => [p, significant(q)])).toEqual(simBook(m, 'ask', 50));
      }
      expect(collector.metrics()).toMatchObject({ resyncs: 0, unknownMessages: 0, venueErrors: 0, reconnects: 0 });
    });

    test('a dropped socket reconnects and resubscribes; a skipped sequence number forces a counted resync that recovers', async () => {
      const { sim, collector, events } = await startLive(c.id, { seed: 12 });
      const venue = sim.venue(c.id);
      await until(() => collector.metrics().trades > 20, 'first trades');
      venue.faults.dropConnections();
      await until(() => collector.metrics().reconnects >= 1 && collector.metrics().connected, 'reconnect');
      const atReconnect = events.length;
      const sentBefore = venue.trades.count;
      await until(() => venue.trades.count > sentBefore + 20, 'trades after the reconnect');
      // The skipped update must reach a subscribed book: on a loaded machine the book's subscription can
      // be answered after the trades flow again, and a skip taken before it is lost on nobody.
      await until(() => events.slice(atReconnect).some((e) => e.type === 'book' && e.market === c.gapSymbol), 'a book of the gap market after the reconnect', 30_000);
      await sleep(300);
      venue.faults.skipSequence(c.gapSymbol);
      // The gap is found at the market's next book update, and the book is asked for again: slower on a loaded machine.
      const resynced = () => collector.metrics().resyncs >= 1;
      const context = () => JSON.stringify(collector.metrics());
      if (c.checksumOnly) {
        // Kraken's checksum covers the top 10 only: an update that overwrites the skipped levels
        // first hides the gap for good. The skip is then made again, a bounded number of times.
        for (let skips = 1; skips < 4 && !(await until(resynced, 'resync', 8_000).then(() => true, () => false)); skips++) venue.faults.skipSequence(c.gapSymbol);
        await until(resynced, 'resync', { timeoutMs: 8_000, context });
      } else if (!c.wholeBooks) await until(resynced, 'resync', { timeoutMs: 30_000, context });
      const atResync = events.length;
      // Books are published only while synced: a new book of the market means the resync completed.
      await until(() => events.slice(atResync).some((e) => e.type === 'book' && e.market === c.gapSymbol && e.receivedAt > Date.now() - 200), 'a book after the resync');
      await collector.stop();
      // Every trade sent after the reconnect arrived (the simulator records only what it sent to a subscriber).
      const got = new Set(trades(events).map((t) => `${t.market}/${t.tradeId}`));
      const ours = new Set(collector.markets().map((m) => m.symbol));
      for (const t of venue.trades.since(sentBefore)) if (ours.has(t.symbol)) expect(got.has(`${t.symbol}/${t.id}`)).toBe(true);
      expect(collector.metrics().unknownMessages).toBe(0);
      if (c.wholeBooks) expect(collector.metrics().resyncs).toBe(0);
    });
  });
}
