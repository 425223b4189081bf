// The soak run, shortened for the suite: two minutes of the whole service against the simulator,
// with every fault of the full run and a store outage, through a bus bound small enough to be
// crossed many times over (about 64,000 trades and as many books through 8,000 records per topic).
import { expect, test } from 'vitest';
import { faultSchedule, runSoak } from './soak.ts';

test('two minutes of faults: every delivered trade stored once, no index second lost, memory bounded, prices measured outside the outage', async () => {
  const durationMs = 120_000;
  const result = await runSoak({ durationMs, faults: faultSchedule(durationMs, 10_000), busMaxRecordsPerTopic: 8_000, rssBoundMb: 1_536, recoveryMs: 45_000, report: () => {} });
  console.log(result.summary);
  expect(result.failures).toEqual([]);
  // The bound was crossed many times over: more than 5 times its size went through.
  expect(result.figures.delivered).toBeGreaterThan(5 * 8_000);
}, 420_000);
