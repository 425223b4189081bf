import { expect, test } from 'vitest';
import { liveVenueSuite, startLive, until } from './liveVenue.ts';

// USDT pairs of the test assets; ETH-BTC is not USD-quoted. Every (re)connect asks bullet-public
// for a token first: the simulator refuses a socket whose token it did not hand out.
liveVenueSuite({ id: 'kucoin', markets: 6, gapSymbol: 'SOL-USDT', liquidations: false });

test('kucoin: while bullet-public fails (an outage) the token request is retried with backoff, then trades flow again', async () => {
  const { sim, collector } = await startLive('kucoin', { seed: 13, tuning: { backoff: { baseMs: 50, maxMs: 300 } } });
  const venue = sim.venue('kucoin');
  await until(() => collector.metrics().trades > 5, 'first trades');
  venue.faults.outage(1_500);
  await until(() => !collector.metrics().connected, 'the outage');
  const tradesAtOutage = collector.metrics().trades;
  await until(() => collector.metrics().connected && collector.metrics().trades > tradesAtOutage + 5, 'trades after the outage', 10_000);
  // The simulator takes each token once: reconnecting with the old URL would never succeed.
  expect(collector.metrics().reconnects).toBeGreaterThanOrEqual(1);
  expect(collector.metrics()).toMatchObject({ unknownMessages: 0, venueErrors: 0 });
});
