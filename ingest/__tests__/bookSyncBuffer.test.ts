// The buffer of diffs a REST-snapshot book holds while its snapshot is fetched (ingest/bookSync.ts,
// 5,000 updates), pushed many times past its bound: what is kept, what a snapshot then applies, and
// what is counted (resyncs, and buffer overflows apart from them). Binance's rule (update-id chain)
// decides which diffs continue the book.
import { expect, test } from 'vitest';
import type { RawLevel } from '../orderBook.ts';
import { BookSync } from '../bookSync.ts';
import type { BookMessage, VenueMarket } from '../venue.ts';
import { binance } from '../venues/binance.ts';

const bound = 5_000;
const market: VenueMarket = { symbol: 'BTCUSDT', base: 'BTC', quote: 'USDT', asset: 'bitcoin', contractSize: '1' };

/** Diff `id`: one bid and one ask level among 300 prices each, a level removed every seventh diff. */
function diff(id: number): BookMessage {
  const quantity = id % 7 === 0 ? '0' : String(id);
  return {
    kind: 'book', symbol: market.symbol, snapshot: false, firstId: id, lastId: id,
    bids: [[String(1_000 + (id % 300)), quantity]],
    asks: [[String(2_000 + ((id * 7) % 300)), quantity]],
  };
}

/** The book a snapshot plus diffs make, applied here by hand: a level set to 0 is gone. */
function expectedBook(snapshot: { bids: RawLevel[]; asks: RawLevel[] }, diffs: BookMessage[]) {
  const sides = { bid: new Map<number, number>(), ask: new Map<number, number>() };
  const set = (side: 'bid' | 'ask', [price, quantity]: RawLevel) => {
    if (Number(quantity) === 0) sides[side].delete(Number(price));
    else sides[side].set(Number(price), Number(quantity));
  };
  for (const level of snapshot.bids) set('bid', level);
  for (const level of snapshot.asks) set('ask', level);
  for (const d of diffs) {
    for (const level of d.bids) set('bid', level);
    for (const level of d.asks) set('ask', level);
  }
  return {
    bid: [...sides.bid].sort((a, b) => b[0] - a[0]),
    ask: [...sides.ask].sort((a, b) => a[0] - b[0]),
  };
}

const snapshotLevels = { bids: [['999.5', '3']] as RawLevel[], asks: [['2300.5', '4']] as RawLevel[] };

test('ten times the bound while the snapshot is fetched: memory stays bounded, the last partial buffer is what a snapshot continues', () => {
  const sync = new BookSync(binance.book!, market);
  const pushed = 10 * bound + 1_234;
  // At each bound the buffer starts over with the next diff, counted: at 5,001, 10,001, ..., 50,001.
  const overflowAt = new Set([5_001, 10_001, 15_001, 20_001, 25_001, 30_001, 35_001, 40_001, 45_001, 50_001]);
  for (let id = 1; id <= pushed; id++) {
    expect(sync.onMessage(diff(id)), `diff ${id}`).toBe(overflowAt.has(id) ? 'overflow' : 'buffered');
    expect(sync.wantsRestSnapshot).toBe(true);
  }
  expect(sync.bufferOverflows).toBe(10);
  // Held are the last 1,234, from 50,001.
  const firstHeld = pushed - (((pushed - 1) % bound) + 1) + 1;
  expect(firstHeld).toBe(10 * bound + 1);
  // A snapshot older than the first held diff is refetched (Binance: lastUpdateId strictly below U);
  // one at it is continued by the held diffs after it.
  expect(sync.onRestSnapshot({ lastId: firstHeld - 1, ...snapshotLevels })).toBe('refetch');
  expect(sync.synced).toBe(false);
  expect(sync.onRestSnapshot({ lastId: firstHeld, ...snapshotLevels })).toBe('synced');
  const applied = Array.from({ length: pushed - firstHeld }, (_, k) => diff(firstHeld + 1 + k));
  const expected = expectedBook(snapshotLevels, applied);
  expect(sync.book.top('bid', 1_000)).toEqual(expected.bid);
  expect(sync.book.top('ask', 1_000)).toEqual(expected.ask);
  // Dropping a buffer that outgrew its bound is not a resync: no book was discarded, the snapshot is refetched.
  expect(sync.resyncs).toBe(0);
  // Syncing leaves the count as it was: it says how far behind the snapshots were.
  expect(sync.bufferOverflows).toBe(10);
  // The live book goes on from the last held diff.
  expect(sync.onMessage(diff(pushed + 1))).toBe('applied');
});

test('a gap on the live book, then ten times the bound before the next snapshot: one resync, then synced on the newest diffs', () => {
  const sync = new BookSync(binance.book!, market);
  sync.onMessage(diff(1));
  expect(sync.onRestSnapshot({ lastId: 1, ...snapshotLevels })).toBe('synced');
  expect(sync.onMessage(diff(3))).toBe('gap');
  expect(sync.resyncs).toBe(1);
  // The diff that showed the gap opens the buffer; 10 x 5,000 + 17 more go through it.
  const last = 3 + 10 * bound + 17;
  // Buffered from 3: the buffer started over at 5,003, 10,003, ..., 50,003, which holds 18.
  const overflowAt = new Set([5_003, 10_003, 15_003, 20_003, 25_003, 30_003, 35_003, 40_003, 45_003, 50_003]);
  for (let id = 4; id <= last; id++) expect(sync.onMessage(diff(id)), `diff ${id}`).toBe(overflowAt.has(id) ? 'overflow' : 'buffered');
  expect(sync.bufferOverflows).toBe(10);
  const firstHeld = 3 + 10 * bound;
  expect(sync.onRestSnapshot({ lastId: firstHeld - 1, ...snapshotLevels })).toBe('refetch');
  expect(sync.onRestSnapshot({ lastId: firstHeld, ...snapshotLevels })).toBe('synced');
  const expected = expectedBook(snapshotLevels, Array.from({ length: last - firstHeld }, (_, k) => diff(firstHeld + 1 + k)));
  expect(sync.book.top('bid', 1_000)).toEqual(expected.bid);
  expect(sync.book.top('ask', 1_000)).toEqual(expected.ask);
  expect([sync.resyncs, sync.bufferOverflows]).toEqual([1, 10]);
});
