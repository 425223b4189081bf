import { afterEach, expect, test } from 'vitest';
import { catalogAssets } from '../../infra/catalog/catalog.ts';
import { ConfigError } from '../../infra/config.ts';
import type { MarketEvent } from '../../infra/events.ts';
import { createLogger } from '../../infra/log.ts';
import { selectAssets } from '../assetSelection.ts';
import { startCollector } from '../collector.ts';
import type { Collector } from '../collectorKit.ts';
import { startSimulator, type Simulator } from '../../simulator/simulator.ts';
import { gate } from '../venues/gate.ts';
import { until } from './liveVenue.ts';

test('--assets topN is the first N catalog assets (market-cap order); a list names catalog ids', () => {
  expect(selectAssets(undefined)).toBeUndefined();
  expect(selectAssets('  ')).toBeUndefined();
  expect([...selectAssets('top3')!]).toEqual([catalogAssets[0]!.id, catalogAssets[1]!.id, catalogAssets[2]!.id]);
  expect(selectAssets('top100')!.size).toBe(Math.min(100, catalogAssets.length));
  expect([...selectAssets('bitcoin, ethereum')!]).toEqual(['bitcoin', 'ethereum']);
  expect(() => selectAssets('bitcoin,notacoin')).toThrow(ConfigError);
  expect(() => selectAssets('bitcoin,notacoin')).toThrow(/notacoin/);
  expect(() => selectAssets('top0')).toThrow(ConfigError);
});

let running: { sim: Simulator; collector: Collector } | undefined;
afterEach(async () => {
  await running?.collector.stop();
  await running?.sim.close();
  running = undefined;
});

test('a collector given --assets bitcoin,ethereum follows and publishes only those markets', async () => {
  const sim = await startSimulator({ seed: 21, venues: ['gate'], tickers: ['BTC', 'ETH', 'SOL', 'XRP'], tradesPerSecondPerMarket: 10 });
  const events: MarketEvent[] = [];
  const collector = await startCollector({
    venue: gate,
    endpoints: sim.endpoints('gate'),
    bus: { publish: (e) => void events.push(...e) },
    log: createLogger('silent'),
    assets: selectAssets('bitcoin,ethereum'),
    tuning: { bookEveryMs: 100 },
  });
  running = { sim, collector };
  await collector.ready();
  // ETH_BTC is not USD-quoted; SOL and XRP are catalog assets left out by the operator, not unmapped.
  expect(collector.markets().map((m) => m.symbol).sort()).toEqual(['BTC_USDT', 'ETH_USDT']);
  expect(collector.unmapped()).toEqual([]);
  await until(() => events.some((e) => e.type === 'book' && e.market === 'ETH_USDT') && events.filter((e) => e.type === 'trade').length > 10, 'trades and books');
  expect(new Set(events.map((e) => e.asset))).toEqual(new Set(['bitcoin', 'ethereum']));
  // The simulator did trade SOL and XRP meanwhile: they were not subscribed.
  expect(sim.venue('gate').trades.since(0).every((t) => t.symbol === 'BTC_USDT' || t.symbol === 'ETH_USDT')).toBe(true);
});
