import { describe, expect, test } from 'vitest';
import { BookSync, ConnectionSequence } from '../bookSync.ts';
import { OrderBook, type RawLevel } from '../orderBook.ts';
import type { BookMessage, BookRule, RestSnapshot, VenueMarket } from '../venue.ts';

// The venue rules here are written for the test (not a venue's): a strict id chain, and a checksum
// that is the number of levels on the book, so each expected value can be counted by hand.

const market: VenueMarket = { symbol: 'BTCUSD', base: 'BTC', quote: 'USD', asset: 'bitcoin', contractSize: '1' };

function update(fields: Partial<BookMessage> = {}): BookMessage {
  return { kind: 'book', symbol: 'BTCUSD', snapshot: false, bids: [], asks: [], ...fields };
}

/** apply when `firstId` follows lastId, stale when it is behind, gap when it skips; the first update after a snapshot may overlap it. */
const chain: BookRule['sequence'] = (lastId, u, fresh) => {
  const first = u.firstId ?? u.lastId!;
  if (u.lastId! <= lastId) return 'stale';
  if (fresh ? first <= lastId + 1 : first === lastId + 1) return 'apply';
  return 'gap';
};
const levelCount: BookRule['checksum'] = (book) => book.size('bid') + book.size('ask');
const rest: NonNullable<BookRule['restSnapshot']> = {
  url: (base, symbol) => `${base}/depth?symbol=${symbol}`,
  parse: (json) => json as RestSnapshot,
};

describe('OrderBook', () => {
  test('bids best (highest) first, asks best (lowest) first; quantity 0 removes a level; raw strings kept as sent', () => {
    const book = new OrderBook();
    for (const level of [['100.5', '1'], ['101', '2'], ['99', '3']] as RawLevel[]) book.set('bid', level);
    for (const level of [['103', '1'], ['102.0', '4'], ['104', '5']] as RawLevel[]) book.set('ask', level);
    expect(book.top('bid', 2)).toEqual([[101, 2], [100.5, 1]]);
    expect(book.top('ask', 2)).toEqual([[102, 4], [103, 1]]);
    expect(book.topRaw('ask', 1)).toEqual([['102.0', '4']]);
    book.set('bid', ['101', '0.000']);
    book.set('ask', ['102', '7']);
    expect(book.top('bid', 5)).toEqual([[100.5, 1], [99, 3]]);
    expect(book.topRaw('ask', 5)).toEqual([['102', '7'], ['103', '1'], ['104', '5']]);
    expect([book.size('bid'), book.size('ask')]).toEqual([2, 3]);
  });

  test('truncate keeps the best n of each side, and leaves a side at or below n as it is', () => {
    const book = new OrderBook();
    for (const p of ['1', '2', '3', '4']) book.set('bid', [p, '1']);
    for (const p of ['5', '6']) book.set('ask', [p, '1']);
    book.truncate(2);
    expect(book.top('bid', 9)).toEqual([[4, 1], [3, 1]]);
    expect(book.top('ask', 9)).toEqual([[5, 1], [6, 1]]);
    book.clear();
    expect([book.size('bid'), book.size('ask')]).toEqual([0, 0]);
  });
});

describe('BookSync, stream snapshots', () => {
  const rule: BookRule = { sequence: chain, checksum: levelCount, depth: 2 };

  test('updates before the first snapshot are ignored; then the chain is followed, cut to the depth, checked', () => {
    const sync = new BookSync(rule, market);
    expect(sync.onMessage(update({ firstId: 1, lastId: 1, bids: [['1', '1']] }))).toBe('ignored');
    expect(sync.synced).toBe(false);
    expect(sync.wantsRestSnapshot).toBe(false);
    const snapshot = update({ snapshot: true, lastId: 10, bids: [['10', '1'], ['9', '1'], ['8', '1']], asks: [['11', '1']], checksum: 3 });
    expect(sync.onMessage(snapshot)).toBe('snapshot');
    expect(sync.synced).toBe(true);
    expect(sync.book.top('bid', 9)).toEqual([[10, 1], [9, 1]]);
    // The first update may overlap the snapshot; later ones must follow exactly.
    expect(sync.onMessage(update({ firstId: 9, lastId: 11, asks: [['12', '1']], checksum: 4 }))).toBe('applied');
    expect(sync.onMessage(update({ firstId: 11, lastId: 11, checksum: 4 }))).toBe('stale');
    expect(sync.onMessage(update({ firstId: 12, lastId: 12, asks: [['13', '1']], checksum: 4 }))).toBe('applied');
    expect(sync.book.top('ask', 9)).toEqual([[11, 1], [12, 1]]);
    expect(sync.resyncs).toBe(0);
  });

  test('a later update that overlaps is a gap: counted, the book dropped, updates ignored until a snapshot', () => {
    const sync = new BookSync(rule, market);
    sync.onMessage(update({ snapshot: true, lastId: 10, bids: [['10', '1']] }));
    expect(sync.onMessage(update({ firstId: 11, lastId: 12 }))).toBe('applied');
    expect(sync.onMessage(update({ firstId: 12, lastId: 13 }))).toBe('gap');
    expect(sync.resyncs).toBe(1);
    expect(sync.synced).toBe(false);
    expect(sync.book.size('bid')).toBe(0);
    expect(sync.onMessage(update({ firstId: 14, lastId: 14 }))).toBe('ignored');
    // Nothing is held any more (a stream venue buffers nothing): a later invalidation counts nothing.
    sync.invalidate();
    expect(sync.resyncs).toBe(1);
  });

  test('a checksum that does not match is a resync, for a snapshot and for an update; no checksum in the message is not checked', () => {
    const sync = new BookSync(rule, market);
    expect(sync.onMessage(update({ snapshot: true, lastId: 1, bids: [['10', '1']], checksum: 2 }))).toBe('checksum');
    expect(sync.resyncs).toBe(1);
    expect(sync.synced).toBe(false);
    expect(sync.onMessage(update({ snapshot: true, lastId: 1, bids: [['10', '1']] }))).toBe('snapshot');
    expect(sync.onMessage(update({ firstId: 2, lastId: 2, asks: [['11', '1']], checksum: 1 }))).toBe('checksum');
    expect(sync.resyncs).toBe(2);
    expect([sync.synced, sync.book.size('bid'), sync.book.size('ask')]).toEqual([false, 0, 0]);
  });

  test('without a sequence rule every update applies; a snapshot without lastId starts from -1', () => {
    const sync = new BookSync({ checksum: levelCount }, market);
    sync.onMessage(update({ snapshot: true, bids: [['10', '1']] }));
    expect(sync.onMessage(update({ bids: [['9', '1']], checksum: 2 }))).toBe('applied');
    expect(sync.onMessage(update({ bids: [['9', '0']], checksum: 1 }))).toBe('applied');
    const seen: number[] = [];
    const sequenced = new BookSync({ sequence: (lastId) => (seen.push(lastId), 'apply') }, market);
    sequenced.onMessage(update({ snapshot: true }));
    sequenced.onMessage(update({ lastId: 5 }));
    sequenced.onMessage(update({}));
    sequenced.onMessage(update({}));
    // An update without an id leaves the last one in place.
    expect(seen).toEqual([-1, 5, 5]);
  });

  test('the first update after a snapshot is the only fresh one, again after each snapshot', () => {
    const fresh: boolean[] = [];
    const sync = new BookSync({ sequence: (_l, _u, f) => (fresh.push(f), 'apply') }, market);
    sync.onMessage(update({ snapshot: true, lastId: 1 }));
    sync.onMessage(update({ lastId: 2 }));
    sync.onMessage(update({ lastId: 3 }));
    sync.onMessage(update({ snapshot: true, lastId: 3 }));
    sync.onMessage(update({ lastId: 4 }));
    expect(fresh).toEqual([true, false, true]);
  });

  test('a snapshot over a live book replaces it whole: levels it does not list are gone, uncounted, and the chain goes on from its id', () => {
    // No depth cut here: every level of the old book would still be there if the snapshot were merged into it.
    const sync = new BookSync({ sequence: chain, checksum: levelCount }, market);
    expect(sync.onMessage(update({ snapshot: true, lastId: 10, bids: [['10', '1'], ['9', '1']], asks: [['11', '1']], checksum: 3 }))).toBe('snapshot');
    expect(sync.onMessage(update({ firstId: 11, lastId: 11, bids: [['8', '2']], asks: [['12', '1']], checksum: 5 }))).toBe('applied');
    // The venue sends the whole book again while ours is live (a resubscription, a periodic snapshot).
    expect(sync.onMessage(update({ snapshot: true, lastId: 20, bids: [['9.5', '3']], asks: [['10.5', '4']], checksum: 2 }))).toBe('snapshot');
    expect(sync.book.top('bid', 9)).toEqual([[9.5, 3]]);
    expect(sync.book.top('ask', 9)).toEqual([[10.5, 4]]);
    expect([sync.synced, sync.resyncs]).toEqual([true, 0]);
    // Ids up to the new snapshot's are stale; the first update after it is fresh again.
    expect(sync.onMessage(update({ firstId: 12, lastId: 12, bids: [['7', '1']] }))).toBe('stale');
    expect(sync.onMessage(update({ firstId: 19, lastId: 21, bids: [['9.4', '1']], checksum: 3 }))).toBe('applied');
    expect(sync.book.top('bid', 9)).toEqual([[9.5, 3], [9.4, 1]]);
  });

  test('invalidate counts a resync only when there was a book or a buffer; reset never counts', () => {
    const sync = new BookSync(rule, market);
    sync.invalidate();
    expect(sync.resyncs).toBe(0);
    sync.onMessage(update({ snapshot: true, lastId: 1, bids: [['1', '1']] }));
    sync.invalidate();
    expect([sync.resyncs, sync.synced, sync.book.size('bid')]).toEqual([1, false, 0]);
    sync.onMessage(update({ snapshot: true, lastId: 1 }));
    sync.reset();
    expect([sync.resyncs, sync.synced]).toEqual([1, false]);
    // After a reset the id chain starts over: the first update after the next snapshot is fresh.
    sync.onMessage(update({ snapshot: true, lastId: 20 }));
    expect(sync.onMessage(update({ firstId: 15, lastId: 21 }))).toBe('applied');
  });
});

describe('BookSync, REST snapshots', () => {
  const rule: BookRule = { restSnapshot: rest, sequence: chain, checksum: levelCount };

  test('buffers updates until the snapshot, then applies the buffered ones that follow it', () => {
    const sync = new BookSync(rule, market);
    expect(sync.wantsRestSnapshot).toBe(false);
    expect(sync.onMessage(update({ firstId: 5, lastId: 6, bids: [['10', '2']] }))).toBe('buffered');
    expect(sync.wantsRestSnapshot).toBe(true);
    expect(sync.onMessage(update({ firstId: 7, lastId: 8, asks: [['11', '1']], checksum: 3 }))).toBe('buffered');
    expect(sync.onRestSnapshot({ lastId: 6, bids: [['10', '1'], ['9', '1']], asks: [] })).toBe('synced');
    expect(sync.synced).toBe(true);
    expect(sync.wantsRestSnapshot).toBe(false);
    // The update up to 6 is stale against the snapshot; 7..8 applied, leaving 3 levels as its checksum says.
    expect(sync.book.top('bid', 9)).toEqual([[10, 1], [9, 1]]);
    expect(sync.book.top('ask', 9)).toEqual([[11, 1]]);
  });

  test('a snapshot older than the first buffered update is refetched; so is one with nothing buffered', () => {
    const sync = new BookSync(rule, market);
    expect(sync.onRestSnapshot({ lastId: 100, bids: [], asks: [] })).toBe('refetch');
    sync.onMessage(update({ firstId: 5, lastId: 6 }));
    expect(sync.onRestSnapshot({ lastId: 4, bids: [], asks: [] })).toBe('refetch');
    expect(sync.onRestSnapshot({ lastId: 5, bids: [], asks: [] })).toBe('synced');
    const byLastId = new BookSync(rule, market);
    byLastId.onMessage(update({ lastId: 6 }));
    expect(byLastId.onRestSnapshot({ lastId: 5, bids: [], asks: [] })).toBe('refetch');
    expect(byLastId.onRestSnapshot({ lastId: 6, bids: [], asks: [] })).toBe('synced');
  });

  test('a gap among the buffered updates fails the sync; the update that showed it starts the next buffer', () => {
    const sync = new BookSync(rule, market);
    sync.onMessage(update({ firstId: 5, lastId: 6 }));
    sync.onMessage(update({ firstId: 9, lastId: 9 }));
    expect(sync.onRestSnapshot({ lastId: 6, bids: [], asks: [] })).toBe('gap');
    expect([sync.resyncs, sync.synced, sync.wantsRestSnapshot]).toEqual([1, false, true]);
    expect(sync.onRestSnapshot({ lastId: 8, bids: [], asks: [] })).toBe('refetch');
    expect(sync.onRestSnapshot({ lastId: 9, bids: [], asks: [] })).toBe('synced');
  });

  test('invalidate while updates are buffered counts a resync and drops them', () => {
    const sync = new BookSync(rule, market);
    sync.onMessage(update({ firstId: 5, lastId: 6 }));
    sync.invalidate();
    expect([sync.resyncs, sync.wantsRestSnapshot]).toEqual([1, false]);
    expect(sync.onRestSnapshot({ lastId: 6, bids: [], asks: [] })).toBe('refetch');
  });

  test('a checksum failure among the buffered updates fails the sync and keeps no buffer', () => {
    const sync = new BookSync(rule, market);
    sync.onMessage(update({ firstId: 5, lastId: 6, bids: [['1', '1']], checksum: 5 }));
    expect(sync.onRestSnapshot({ lastId: 5, bids: [], asks: [] })).toBe('checksum');
    expect([sync.resyncs, sync.synced, sync.wantsRestSnapshot]).toEqual([1, false, false]);
  });

  test('a gap on the live book keeps the update for the next buffer', () => {
    const sync = new BookSync(rule, market);
    sync.onMessage(update({ firstId: 2, lastId: 2 }));
    expect(sync.onRestSnapshot({ lastId: 2, bids: [], asks: [] })).toBe('synced');
    expect(sync.onMessage(update({ firstId: 4, lastId: 4 }))).toBe('gap');
    expect(sync.wantsRestSnapshot).toBe(true);
    expect(sync.onRestSnapshot({ lastId: 3, bids: [], asks: [] })).toBe('refetch');
    expect(sync.onRestSnapshot({ lastId: 4, bids: [], asks: [] })).toBe('synced');
    expect(sync.onRestSnapshot({ lastId: 4, bids: [], asks: [] })).toBe('refetch');
  });

  test('at 5000 buffered updates the buffer starts over with the next one', () => {
    const sync = new BookSync(rule, market);
    for (let id = 1; id <= 5_000; id++) sync.onMessage(update({ firstId: id, lastId: id }));
    // Update 5001 empties the buffer: a snapshot at 1 is now older than its first update.
    sync.onMessage(update({ firstId: 5_001, lastId: 5_001 }));
    expect(sync.onRestSnapshot({ lastId: 1, bids: [], asks: [] })).toBe('refetch');
    expect(sync.onRestSnapshot({ lastId: 5_000, bids: [], asks: [] })).toBe('refetch');
    expect(sync.onRestSnapshot({ lastId: 5_001, bids: [], asks: [] })).toBe('synced');
    const full = new BookSync(rule, market);
    for (let id = 1; id <= 5_000; id++) full.onMessage(update({ firstId: id, lastId: id }));
    expect(full.onRestSnapshot({ lastId: 1, bids: [], asks: [] })).toBe('synced');
  });
});

test('ConnectionSequence: each value must follow the previous one; the first, and the first after a reset, always fit', () => {
  const sequence = new ConnectionSequence();
  expect([7, 8, 9].map((v) => sequence.observe(v))).toEqual(['ok', 'ok', 'ok']);
  expect(sequence.observe(11)).toBe('gap');
  expect(sequence.observe(12)).toBe('ok');
  expect(sequence.observe(12)).toBe('gap');
  sequence.reset();
  expect(sequence.observe(3)).toBe('ok');
});
