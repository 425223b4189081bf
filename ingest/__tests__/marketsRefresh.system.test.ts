import { afterEach, expect, test } from 'vitest';
import type { MarketEvent } from '../../infra/events.ts';
import { createLogger } from '../../infra/log.ts';
import { startCollector } from '../collector.ts';
import type { Collector } from '../collectorKit.ts';
import { startSimulator, type Simulator } from '../../simulator/simulator.ts';
import { kucoin } from '../venues/kucoin.ts';
import { sleep, until } from './liveVenue.ts';

let running: { sim: Simulator; collector: Collector } | undefined;
afterEach(async () => {
  await running?.collector.stop();
  await running?.sim.close();
  running = undefined;
});

test('the collector lists the markets again: a new listing is subscribed and collected, a delisted one published as such and dropped', async () => {
  const sim = await startSimulator({ seed: 31, venues: ['kucoin'], tickers: ['BTC', 'ETH'], tradesPerSecondPerMarket: 10 });
  const venue = sim.venue('kucoin');
  const events: MarketEvent[] = [];
  const collector = await startCollector({
    venue: kucoin,
    endpoints: sim.endpoints('kucoin'),
    bus: { publish: (e) => void events.push(...e) },
    log: createLogger('silent'),
    tuning: { bookEveryMs: 100, marketsRefreshMs: 300 },
  });
  running = { sim, collector };
  await collector.ready();
  const symbols = () => collector.markets().map((m) => m.symbol).sort();
  expect(symbols()).toEqual(['BTC-USDT', 'ETH-USDT']);
  // Both ETH subscriptions answered (trades, and a book synced from its diffs): delisted before its book
  // subscription reached the venue, ETH would be refused as unknown (a venue error), which is not what is tested.
  await until(() => events.some((e) => e.type === 'trade' && e.market === 'ETH-USDT') && events.some((e) => e.type === 'book' && e.market === 'ETH-USDT'), 'ETH trades and book');

  venue.listing.add({ symbol: 'SOL-USDT', base: 'SOL', quote: 'USDT' });
  venue.listing.remove('ETH-USDT');
  await until(() => symbols().join() === 'BTC-USDT,SOL-USDT', 'the refreshed markets');
  const atChange = events.length;
  await until(() => events.slice(atChange).some((e) => e.type === 'book' && e.market === 'SOL-USDT') && events.slice(atChange).filter((e) => e.type === 'trade' && e.market === 'SOL-USDT').length > 5, 'SOL trades and book');
  await sleep(300);
  await collector.stop();

  // Every SOL trade the venue sent reached us, once, with the catalog's asset.
  const solSent = venue.trades.since(0).filter((t) => t.symbol === 'SOL-USDT').map((t) => String(t.id)).sort();
  const solGot = events.filter((e) => e.type === 'trade' && e.market === 'SOL-USDT');
  expect(solGot.map((e) => (e.type === 'trade' ? e.tradeId : '')).sort()).toEqual(solSent);
  expect(solGot.every((e) => e.asset === 'solana')).toBe(true);
  // The delisting was published once, as a status of the delisted market (what retires a discovered asset).
  const delistings = events.flatMap((e) => (e.type === 'status' && e.delisted ? [[e.market, e.connected]] : []));
  expect(delistings).toEqual([['ETH-USDT', false]]);
  // Nothing of the delisted market after the change; BTC kept flowing on its original socket.
  expect(events.slice(atChange).some((e) => e.market === 'ETH-USDT')).toBe(false);
  expect(events.slice(atChange).some((e) => e.type === 'trade' && e.market === 'BTC-USDT')).toBe(true);
  expect(collector.metrics()).toMatchObject({ markets: 2, reconnects: 0, unknownMessages: 0, venueErrors: 0 });
});
