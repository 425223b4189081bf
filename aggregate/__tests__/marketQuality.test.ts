import { expect, test } from 'vitest';
import { marketQuality } from '../marketQuality.ts';

// A book around a mid of exactly 100, with the expected numbers worked out by hand below.
const book = {
  bids: [[99, 100], [98.5, 200], [97, 1_000], [96, 500]] as [number, number][],
  asks: [[101, 100], [101.5, 200], [102, 300], [103.5, 1_000]] as [number, number][],
};

test('spread, depth and cost to trade against the mid', () => {
  const q = marketQuality(book, 1)!;
  expect(q.spreadBps).toBeCloseTo(200, 9); // (101 - 99) / 100
  expect(q.depthBid).toBeCloseTo(99 * 100 + 98.5 * 200, 9); // bids >= 98
  expect(q.depthAsk).toBeCloseTo(101 * 100 + 101.5 * 200 + 102 * 300, 9); // asks <= 102
  expect(q.depthBid1).toBeCloseTo(99 * 100, 9);
  expect(q.depthAsk1).toBeCloseTo(101 * 100, 9);
  // Buying $10k fills entirely at 101: 1 % above the mid.
  expect(q.costBuy['10000']).toBeCloseTo(100, 9);
  // $100k: all of 101, 101.5 and 102 (61,000), then 39,000 at 103.5.
  const base = 100 + 200 + 300 + 39_000 / 103.5;
  expect(q.costBuy['100000']).toBeCloseTo((100_000 / base / 100 - 1) * 10_000, 9);
  // The visible asks hold 164,500: $1M cannot be filled.
  expect(q.costBuy['1000000']).toBeNull();
  // Selling $10k: 9,900 at 99, then 100 at 98.5.
  const sold = 100 + 100 / 98.5;
  expect(q.costSell['10000']).toBeCloseTo((1 - 10_000 / sold / 100) * 10_000, 9);
});

test('a quote worth 2 USD doubles the USD depth and halves the base needed', () => {
  const q = marketQuality(book, 2)!;
  expect(q.depthBid1).toBeCloseTo(2 * 99 * 100, 9);
  // $10k is 5,000 in quote: filled at 101.
  expect(q.costBuy['10000']).toBeCloseTo(100, 9);
});

test('no measurement from a one-sided or crossed book', () => {
  expect(marketQuality({ bids: book.bids, asks: [] }, 1)).toBeUndefined();
  expect(marketQuality({ bids: [[102, 1]], asks: [[101, 1]] }, 1)).toBeUndefined();
});
