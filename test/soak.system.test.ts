// The soak run, shortened for the suite: ninety seconds of the whole service against the simulator,
// with every fault of the full run (socket drops, venue outages, a store outage, a burst, a SIGKILL
// and restart), through a bus bound small enough to be crossed many times over.
import { expect, test } from 'vitest';
import { faultSchedule, runSoak } from './soak.ts';

// A third of the simulator's assets (every venue still carries a dozen markets or more), each
// trading twice as often: as many trades go through, and the drain after the run, paced by the
// venues' REST limits per market (Bitfinex: a request in 5 s), takes a third of the time.
const tickers = ['BTC', 'ETH', 'SOL', 'XRP', 'DOGE', 'ADA', 'BNB', 'TRX', 'AVAX', 'LINK', 'DOT', 'LTC'];

test('ninety seconds of faults: every printed trade stored once or in a recorded gap, no index second lost, memory bounded, prices measured outside the outages', async () => {
  const durationMs = 90_000;
  const result = await runSoak({ durationMs, faults: faultSchedule(durationMs, 10_000), busMaxRecordsPerTopic: 8_000, rssBoundMb: 1_536, recoveryMs: 45_000, tickers, tradesPerSecondPerMarket: 2, report: () => {} });
  console.log(result.summary);
  expect(result.failures).toEqual([]);
  // The bound was crossed many times over: more than 5 times its size went through.
  expect(result.figures.trades.printed).toBeGreaterThan(5 * 8_000);
  // The outages and the kill made trades to recover, and they were recovered.
  expect(result.figures.recovered).toBeGreaterThan(0);
}, 900_000);
