// Trades printed while a collector's socket was down come back from the venue's REST history
// (issue #26): the real collector against the simulator, which prints trades whether or not a
// socket is there to get them. Every trade printed during the test reaches the bus, live or
// recovered, and each gap says how it ended.
import { expect, test } from 'vitest';
import type { GapEvent, TradeEvent } from '../../infra/events.ts';
import { simulatedVenueIds, type SimulatedVenueId } from '../../simulator/simulator.ts';
import type { SentTrade } from '../../simulator/venueServer.ts';
import { untilValue } from '../../test/support/until.ts';
import { findNativeVenue } from '../venues/registry.ts';
import { startLive } from './liveVenue.ts';

const key = (venue: string, market: string, id: string) => `${venue}/${market}/${id}`;

/** Waits until every printed trade of `printed` has been published, and returns what was not (after the deadline). */
async function missingAfter(printed: readonly SentTrade[], published: () => ReadonlySet<string>, timeoutMs: number): Promise<string[]> {
  return untilValue(
    () => {
      const have = published();
      const missing = printed.map((p) => key(p.venue, p.market, p.tradeId)).filter((k) => !have.has(k));
      return missing.length === 0 ? missing : undefined;
    },
    'every printed trade published, live or recovered',
    { timeoutMs, everyMs: 100, context: () => `still missing: ${printed.map((p) => key(p.venue, p.market, p.tradeId)).filter((k) => !published().has(k)).slice(0, 10).join(', ')}` },
  );
}

test.each(simulatedVenueIds.map((id) => [id, findNativeVenue(id)!.history?.continuity ?? 'none'] as [SimulatedVenueId, string]))('%s (%s): an outage misses trades, the REST history gives them back, each once; the gap ends recovered', async (id) => {
  const live = await startLive(id, { seed: 11, sim: { tickers: ['BTC', 'ETH'], tradesPerSecondPerMarket: 4, liquidationsPerSecondPerMarket: 0 }, tuning: { backoff: { baseMs: 50, maxMs: 200 } } });
  const printed: SentTrade[] = [];
  // From the first trade received on: what was printed before the collector connected is not this test's.
  await untilValue(() => live.events.find((e) => e.type === 'trade'), 'a first trade');
  const followed = new Set(live.collector.markets().map((m) => m.symbol));
  const stop = live.sim.onTradePrinted((t) => followed.has(t.market) && printed.push(t));
  live.sim.venue(id).inject({ fault: 'outage', ms: 2_000 });
  const published = () => new Set(live.events.filter((e): e is TradeEvent => e.type === 'trade').map((t) => key(t.venue, t.market, t.tradeId)));
  // Trades go on after the outage; then the test stops counting what is printed.
  await untilValue(() => (live.collector.metrics().reconnects > 0 ? true : undefined), 'the socket dropped', 20_000);
  await untilValue(() => (live.collector.metrics().connected ? true : undefined), 'the socket back after the outage', 20_000);
  await new Promise((r) => setTimeout(r, 1_500)); // trades printed after the reconnect, which the live stream carries
  stop();
  const sent = new Set(live.sentTrades.map((t) => key(t.venue, t.market, t.tradeId)));
  const duringOutage = printed.filter((p) => !sent.has(key(p.venue, p.market, p.tradeId)));
  expect(duringOutage.length, 'trades printed while no socket got them').toBeGreaterThan(4);
  expect(await missingAfter(printed, published, 30_000)).toEqual([]);
  // Each trade once on the bus: the recovery took nothing the live stream had delivered.
  const keys = live.events.filter((e): e is TradeEvent => e.type === 'trade').map((t) => key(t.venue, t.market, t.tradeId));
  expect(keys.length).toBe(new Set(keys).size);
  const gaps = live.events.filter((e): e is GapEvent => e.type === 'gap');
  const ended = gaps.filter((g) => g.version === 2);
  expect(ended.length).toBeGreaterThan(0);
  expect(ended.every((g) => g.state === 'recovered' && g.cause === 'reconnect')).toBe(true);
  expect(ended.reduce((n, g) => n + g.recovered, 0)).toBeGreaterThanOrEqual(duringOutage.length);
  expect(live.collector.metrics()).toMatchObject({ gapsRecovered: ended.length, gapsUnrecoverable: 0, gapsPartlyRecovered: 0 });
}, 90_000);
