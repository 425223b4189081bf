// The pipeline's lane on the embedded store (infra/storeLane.ts), against chDB: the engine answers
// parameterised queries one at a time in the order sent, so a query sent around the lane waits for
// at most the lane's queries in the engine, not for every one the pipeline has queued.
import { afterAll, beforeAll, expect, test } from 'vitest';
import { StoreTimeoutError, type Store } from '../store.ts';
import { laneStore } from '../storeLane.ts';
import { openTestStore } from '../../test/support/harness.ts';

let store: Store;
let dispose: () => Promise<void>;
beforeAll(async () => ({ store, dispose } = await openTestStore()));
afterAll(() => dispose());

// A parameterised query that keeps the engine busy for a while (tens of ms here).
const busy = 'SELECT count() AS n FROM numbers({rows:UInt64}) WHERE cityHash64(number) % 7 = {rest:UInt8}';
const busyParams = { rows: 3_000_000, rest: 3 };
const quick = 'SELECT {tag:String} AS tag';

/** Sends `burst` busy queries through `pipeline`, then one quick query straight to the store; the order in which they were answered. */
async function answerOrder(pipeline: Store, burst: number): Promise<string[]> {
  const order: string[] = [];
  const sent = Array.from({ length: burst }, (_, i) => pipeline.rows(busy, busyParams).then(() => order.push(`pipeline ${i}`)));
  // Whatever the lane lets through is in the engine's queue by the next turn of the event loop.
  await new Promise((resolve) => setImmediate(resolve));
  sent.push(store.rows(quick, { tag: 'api' }).then(() => order.push('api')));
  await Promise.all(sent);
  return order;
}

test('without a lane, the engine answers in the order sent: a query sent after a burst of 8 waits for all of it', async () => {
  const order = await answerOrder(store, 8);
  expect(order.at(-1)).toBe('api');
});

test('through a lane of 2, the query sent around it is answered third, after the two in the engine, ahead of the 6 waiting', async () => {
  const order = await answerOrder(laneStore(store, { inFlight: 2, waitMs: 60_000 }), 8);
  expect(order.indexOf('api')).toBe(2);
  // The lane's own queries keep their order.
  expect(order.filter((o) => o !== 'api')).toEqual(Array.from({ length: 8 }, (_, i) => `pipeline ${i}`));
});

test('the lane reports how many wait, and is empty again once every query is answered', async () => {
  const seen: number[] = [];
  const lane = laneStore(store, { inFlight: 1, waitMs: 60_000, onWaiting: (n) => seen.push(n) });
  await Promise.all(Array.from({ length: 4 }, () => lane.rows(quick, { tag: 'x' })));
  expect(Math.max(...seen)).toBe(3);
  expect(seen.at(-1)).toBe(0);
});

test('a query that waits in the lane past its deadline fails as a store timeout, and the lane goes on', async () => {
  const lane = laneStore(store, { inFlight: 1, waitMs: 1 });
  const first = lane.rows(busy, busyParams);
  const second = lane.rows(quick, { tag: 'late' });
  await expect(second).rejects.toBeInstanceOf(StoreTimeoutError);
  await first;
  expect(await lane.rows<{ tag: string }>(quick, { tag: 'after' })).toEqual([{ tag: 'after' }]);
});

test('a failed query gives its place back', async () => {
  const lane = laneStore(store, { inFlight: 1, waitMs: 5_000 });
  await expect(lane.rows('SELECT no_such_column FROM numbers(1)')).rejects.toThrow();
  expect(await lane.rows<{ tag: string }>(quick, { tag: 'next' })).toEqual([{ tag: 'next' }]);
});

test('inserts pass the lane by: one sent while the lane is full is done before the query waiting in it', async () => {
  const lane = laneStore(store, { inFlight: 1, waitMs: 60_000 });
  await store.client.command({ query: 'CREATE TABLE IF NOT EXISTS lane_insert_check (n UInt32) ENGINE = Memory' });
  const order: string[] = [];
  const busyQuery = lane.rows(busy, busyParams).then(() => order.push('busy query'));
  const waiting = lane.rows(quick, { tag: 'waiting' }).then(() => order.push('waiting query'));
  const insert = lane.insert('lane_insert_check', [{ n: 1 }]).then(() => order.push('insert'));
  await Promise.all([busyQuery, waiting, insert]);
  expect(order.indexOf('insert')).toBeLessThan(order.indexOf('waiting query'));
  expect(await store.rows<{ n: number }>('SELECT sum(n) AS n FROM lane_insert_check')).toEqual([{ n: 1 }]);
});
