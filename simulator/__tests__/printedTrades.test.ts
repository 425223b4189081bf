import { expect, test } from 'vitest';
import type { SimTrade } from '../market.ts';
import { PrintedTrades, RestRateLimit } from '../printedTrades.ts';

const trade = (symbol: string, id: number, time: number): SimTrade =>
  ({ venue: 'v', symbol, base: 'B', quote: 'Q', id, price: '1', qty: '1', side: 'buy', time }) as SimTrade;
const ids = (trades: readonly SimTrade[]) => trades.map((t) => t.id);

test('keeps the last trades of each market, counts them all, and tells every listener of each', () => {
  const printed = new PrintedTrades(3);
  const heard: number[] = [];
  const remove = printed.onPrinted((t) => heard.push(t.id));
  printed.push([1, 2, 3, 4, 5, 6, 7].map((id) => trade('A', id, id * 10)));
  printed.push([trade('B', 100, 5)]);
  remove();
  printed.push([trade('A', 8, 80)]);
  expect(printed.count).toBe(9);
  expect(heard).toEqual([1, 2, 3, 4, 5, 6, 7, 100]);
  expect(ids(printed.of('A'))).toEqual([6, 7, 8]);
  expect(ids(printed.of('B'))).toEqual([100]);
  expect(printed.of('C')).toEqual([]);
});

test("a market's history is trimmed once a trade of it was dropped, not before (a venue refuses starts older than it keeps only then)", () => {
  const printed = new PrintedTrades(3);
  printed.push([1, 2, 3].map((id) => trade('A', id, id)));
  printed.push([trade('B', 1, 1)]);
  expect([printed.trimmed('A'), printed.trimmed('B'), printed.trimmed('C')]).toEqual([false, false, false]);
  printed.push([trade('A', 4, 4)]);
  expect([printed.trimmed('A'), printed.trimmed('B')]).toEqual([true, false]);
});

test('pages by id forward and backward, by time, and the latest', () => {
  const printed = new PrintedTrades(100);
  printed.push([10, 11, 12, 13, 14, 15].map((id) => trade('A', id, 1_000 + id)));
  expect(ids(printed.afterId('A', 11, 2))).toEqual([12, 13]);
  expect(ids(printed.afterId('A', 9, 100))).toEqual([10, 11, 12, 13, 14, 15]);
  expect(ids(printed.afterId('A', 15, 5))).toEqual([]);
  expect(ids(printed.beforeId('A', 14, 2))).toEqual([13, 12]);
  expect(ids(printed.beforeId('A', 10, 5))).toEqual([]);
  expect(ids(printed.between('A', 1_011, 1_014, 100))).toEqual([11, 12, 13]);
  expect(ids(printed.between('A', 1_011, 1_014, 2))).toEqual([11, 12]);
  expect(ids(printed.latest('A', 2))).toEqual([15, 14]);
});

test('a rate limit refuses past its requests in any second, and counts what it refused', () => {
  const limit = new RestRateLimit(2);
  expect([limit.take(0), limit.take(100), limit.take(900), limit.take(999)]).toEqual([true, true, false, false]);
  // The window slides: a second after the first request, one more fits.
  expect(limit.take(1_000)).toBe(true);
  expect(limit.take(1_050)).toBe(false);
  expect(limit.take(1_100)).toBe(true);
  expect(limit.refused).toBe(3);
});

test('a limit over a longer window counts every request in it; a venue that blocks refuses all until the block ends', () => {
  // Bitfinex: 15 requests a minute, then 60 s shut out.
  const limit = new RestRateLimit(2, 60_000, 60_000);
  expect([limit.take(0), limit.take(30_000), limit.take(59_000)]).toEqual([true, true, false]);
  // The window has room again at 60 s, but the block from the refusal at 59 s lasts until 119 s.
  expect([limit.take(60_500), limit.take(118_999)]).toEqual([false, false]);
  expect(limit.take(119_000)).toBe(true);
  expect(limit.refused).toBe(3);
  // Without a block, a refusal shuts out nothing: the sliding window alone decides.
  const open = new RestRateLimit(1, 1_000);
  expect([open.take(0), open.take(999), open.take(1_000)]).toEqual([true, false, true]);
});

test('with a time bound, a market keeps only the trades printed within it before its newest', () => {
  const printed = new PrintedTrades(100, 1_000);
  printed.push([1, 2, 3, 4, 5].map((id) => trade('A', id, id * 400)));
  // Newest at 2,000 ms: 1,000 and later are kept (ids 3, 4, 5); nothing was dropped yet but the history starts later.
  expect(ids(printed.of('A'))).toEqual([3, 4, 5]);
  expect(printed.trimmed('A')).toBe(true);
  expect(ids(printed.afterId('A', 0, 10))).toEqual([3, 4, 5]);
  expect(ids(printed.beforeId('A', 4, 10))).toEqual([3]);
  // A market that stopped trading keeps its last trades: the bound counts back from its own newest.
  printed.push([trade('B', 1, 0)]);
  expect(ids(printed.of('B'))).toEqual([1]);
  // The count bound still holds within the time bound.
  const counted = new PrintedTrades(2, 1_000);
  counted.push([1, 2, 3].map((id) => trade('A', id, id)));
  expect(ids(counted.of('A'))).toEqual([2, 3]);
  expect(() => new PrintedTrades(2, 0)).toThrow(RangeError);
});

test('memory: a market keeps no more than its bounds, in count and in age, and its room stays within four times what it keeps', () => {
  const byCount = new PrintedTrades(50, 60_000);
  const byAge = new PrintedTrades(1_000, 1_000);
  let [mostByCount, mostByAge] = [0, 0];
  for (let id = 1; id <= 5_000; id++) {
    byCount.push([trade('A', id, id * 100)]);
    byAge.push([trade('A', id, id * 100)]);
    expect(byCount.of('A').length).toBeLessThanOrEqual(50);
    mostByCount = Math.max(mostByCount, byCount.held('A'));
    mostByAge = Math.max(mostByAge, byAge.held('A'));
  }
  expect(mostByCount).toBeLessThanOrEqual(4 * 50);
  // A trade every 100 ms: 1 s is 10 trades, 11 with both ends.
  expect(ids(byAge.of('A'))).toEqual(Array.from({ length: 11 }, (_, i) => 4_990 + i));
  expect(mostByAge).toBeLessThanOrEqual(4 * 11);
  expect(byCount.held('B')).toBe(0);
});

test('memory: a market that printed a burst gives its room back once the burst ages out', () => {
  const printed = new PrintedTrades(10_000, 1_000);
  printed.push(Array.from({ length: 5_000 }, (_, i) => trade('A', i + 1, 0)));
  expect(printed.held('A')).toBeGreaterThanOrEqual(5_000);
  for (let id = 5_001; id <= 5_100; id++) printed.push([trade('A', id, (id - 5_000) * 100)]);
  expect(printed.of('A').length).toBe(11);
  expect(printed.held('A')).toBeLessThanOrEqual(4 * 11);
});

test("the venue's decimal strings come back exactly as printed, and one that would not is refused", () => {
  const printed = new PrintedTrades(100);
  const sent: SimTrade[] = [
    { venue: 'v', symbol: 'A', base: 'B', quote: 'Q', id: 1, price: '0.00001234', qty: '1250000', side: 'buy', time: 1_700_000_000_001 },
    { venue: 'v', symbol: 'A', base: 'B', quote: 'Q', id: 2, price: '65000.50', qty: '0.10000000', side: 'sell', time: 1_700_000_000_002 },
    { venue: 'v', symbol: 'A', base: 'B', quote: 'Q', id: 3, price: (0.1 + 0.2).toFixed(20), qty: '3', side: 'buy', time: 1_700_000_000_003 },
  ];
  printed.push(sent);
  expect(printed.of('A')).toEqual(sent);
  expect(printed.latest('A', 1)).toEqual([sent[2]]);
  expect(() => printed.push([{ ...sent[0]!, id: 4, price: '1e-7' }])).toThrow(RangeError);
  expect(() => printed.push([{ ...sent[0]!, id: 4, qty: '+5' }])).toThrow(RangeError);
});
