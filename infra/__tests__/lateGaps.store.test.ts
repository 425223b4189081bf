// The ingest role's second look at the gaps an earlier run left open (watchLateGaps): a gap whose row
// reached the store after the start read it (its aggregator behind another's, on Kafka) is handed to
// its venue's collector once; gaps the start handed over, and this run's own, are not. On chDB,
// the rows written by the gap sink.
import { afterAll, beforeAll, expect, test } from 'vitest';
import { startGapSink } from '../../aggregate/gapSink.ts';
import type { FoundGap } from '../../ingest/tradeGaps.ts';
import { createMemoryBus } from '../bus/memoryBus.ts';
import type { GapEvent } from '../events.ts';
import { watchLateGaps } from '../roles/ingest.ts';
import type { Store, StoreCalls } from '../store.ts';
import { openTestStore, silentLog } from '../../test/support/harness.ts';
import { until } from '../../test/support/until.ts';

let store: Store;
let dispose: () => Promise<void>;
beforeAll(async () => ({ store, dispose } = await openTestStore()));
afterAll(async () => dispose());

test('a gap of an earlier run stored after the start read is handed over once; known ones, ended ones and this run\'s own are not', async () => {
  const readAt = Date.now() - 2_000;
  const gap = (gapId: string, ts: number, state: GapEvent['state'] = 'open', venue = 'bitstamp'): GapEvent => ({
    type: 'gap', venue, market: 'btcusd', asset: 'bitcoin', quote: 'USD', ts, receivedAt: ts, gapId,
    version: state === 'open' ? 1 : 2, cause: 'restart', state, fromTs: readAt - 90_000, toTs: readAt - 60_000, recovered: 0,
  });
  const bus = createMemoryBus();
  const sink = await startGapSink({ bus, store, log: silentLog, batchRows: 1, batchMs: 10 });
  const storeGaps = (events: GapEvent[]) => {
    const before = sink.stats().inserted;
    bus.publish(events);
    return until(() => sink.stats().inserted === before + events.length, 'the gaps stored');
  };
  // What the start read: one gap, handed over then.
  await storeGaps([gap('known', readAt - 30_000)]);
  let reads = 0;
  const counted: StoreCalls = { insert: (...args) => store.insert(...args), rows: (...args) => ((reads += 1), store.rows(...args)) };
  const resumed: [string, string[]][] = [];
  const stop = watchLateGaps(counted, {
    venueIds: ['bitstamp', 'kraken'],
    withinMs: 3_600_000,
    readAt,
    known: ['known'],
    resume: (venue, gaps: FoundGap[]) => void resumed.push([venue, gaps.map((g) => g.gapId!)]),
    log: silentLog,
    everyMs: 50,
  });
  // After the start: a gap of the earlier run arrives late, one ended late (open, then ended), and this run's own.
  await storeGaps([gap('late', readAt - 20_000), gap('ended', readAt - 10_000), gap('ended', readAt - 9_000, 'recovered'), gap('own', readAt + 500), gap('late-kraken', readAt - 5_000, 'open', 'kraken')]);
  await until(() => resumed.length >= 2, 'the late gaps handed over');
  const afterHanded = reads;
  await until(() => reads >= afterHanded + 3, 'three more reads');
  expect(resumed.sort()).toEqual([['bitstamp', ['late']], ['kraken', ['late-kraken']]]);
  // One more, later: handed over alone.
  await storeGaps([gap('later', readAt - 1_000)]);
  await until(() => resumed.length === 3, 'the next late gap handed over');
  expect(resumed[2]).toEqual(['bitstamp', ['later']]);
  await stop();
  const stoppedAt = reads;
  await new Promise((r) => setTimeout(r, 200));
  expect(reads).toBe(stoppedAt);
  await sink.stop();
});
