// The liquidity score (methodology.md §2.4, aggregate/METHODOLOGY.md) recomputed here from the raw
// book, in plain TypeScript, and compared with what marketQuality stores.
import fc from 'fast-check';
import { expect, test } from 'vitest';
import { liquidityScoreParamsSchema, marketQuality } from '../marketQuality.ts';
import { expectedLiquidityScore as expectedScore, expectMatches, type Book, type Level } from './liquidityReference.ts';

test('a book worked out by hand', () => {
  // Mid 100. Each side: 20 units 0.1 % away, 200 units 1 % away, 3,000 units 5 % away.
  const book: Book = {
    bids: [[99.9, 20], [99, 200], [95, 3_000]],
    asks: [[100.1, 20], [101, 200], [105, 3_000]],
  };
  // $100 and $1k fill in the first level on both sides: 10 bps each, g = 1 / (1 + 10 / 10) = 0.5.
  // $10k buy: 2,002 at 100.1, then 7,998 at 101; sell: 1,998 at 99.9, then 8,002 at 99.
  const g = (buyBase: number, sellBase: number, usd: number) => 1 / (1 + ((usd / buyBase / 100 - 1) * 10_000 + (1 - usd / sellBase / 100) * 10_000) / 2 / 10);
  const g10k = g(20 + 7_998 / 101, 20 + 8_002 / 99, 10_000);
  // $100k: first two levels (22,202 ask / 21,798 bid), the rest at 105 / 95.
  const g100k = g(220 + 77_798 / 105, 220 + 78_202 / 95, 100_000);
  const g200k = g(220 + 177_798 / 105, 220 + 178_202 / 95, 200_000);
  // 2 % depth: bids 1,998 + 19,800, asks 2,002 + 20,200.
  const balance = (1_998 + 19_800) / (2_002 + 20_200);
  const expected = 1000 * balance * (0.25 * 0.5 + 0.25 * 0.5 + 0.25 * g10k + 0.15 * g100k + 0.1 * g200k);
  const score = marketQuality(book, 1)!.liquidityScore;
  expect(score).toBe(Math.round(expected));
  expect(score).toBe(Math.round(expectedScore(book, 1)));
  // Numbers a reader can check: g10k ≈ 0.1087, g100k ≈ 0.0238, g200k ≈ 0.0215, balance ≈ 0.9818: 277.7.
  expect(score).toBe(278);
});

test('a book under $100 within 10 % of the mid scores 0, however tight', () => {
  const book: Book = { bids: [[99.99, 0.4], [80, 1_000]], asks: [[100.01, 0.4], [120, 1_000]] };
  // 39.996 + 40.004 = 80 USD inside ±10 %; the deep levels are outside it.
  expect(marketQuality(book, 1)!.liquidityScore).toBe(0);
  // Worth 2 USD per quote unit, the same book holds $160: scored.
  expect(marketQuality(book, 2)!.liquidityScore).toBeGreaterThan(0);
  expectMatches(marketQuality(book, 2)!.liquidityScore, expectedScore(book, 2));
});

test('a one-sided book is floored at half; sizes the book cannot fill earn nothing', () => {
  // 1 bps from the mid on both sides, but the asks hold $10,001 and the bids $1M.
  const book: Book = { bids: [[99.99, 10_000]], asks: [[100.01, 100]] };
  // $100, $1k: 1 bps each side, g = 1 / 1.1. $10k: both sides fill (10,001 asks). $100k, $200k: the asks cannot.
  const expected = 1000 * 0.5 * ((0.25 + 0.25 + 0.25) / 1.1);
  expect(marketQuality(book, 1)!.liquidityScore).toBe(Math.round(expected));
});

test('parameters: other sizes and weights change the score as written', () => {
  const params = liquidityScoreParamsSchema.parse({ sizesUsd: [100], weights: [1], costScaleBps: 5 });
  const book: Book = { bids: [[99.9, 20]], asks: [[100.1, 20]] };
  // 10 bps each side, g = 1 / (1 + 10 / 5); balance 1998 / 2002.
  expect(marketQuality(book, 1, params)!.liquidityScore).toBe(Math.round((1000 * (1_998 / 2_002)) / 3));
  expect(() => liquidityScoreParamsSchema.parse({ sizesUsd: [100, 200], weights: [1] })).toThrow(/same length/);
});

/** A random valid book: a mid, a spread, and levels moving away from it on each side. */
const bookArb = fc
  .record({
    mid: fc.double({ min: 1e-3, max: 1e5, noNaN: true }),
    halfSpread: fc.double({ min: 1e-7, max: 0.03, noNaN: true }),
    bidGaps: fc.array(fc.double({ min: 1e-6, max: 0.03, noNaN: true }), { minLength: 1, maxLength: 40 }),
    askGaps: fc.array(fc.double({ min: 1e-6, max: 0.03, noNaN: true }), { minLength: 1, maxLength: 40 }),
    bidUsd: fc.array(fc.double({ min: 0.5, max: 300_000, noNaN: true }), { minLength: 40, maxLength: 40 }),
    askUsd: fc.array(fc.double({ min: 0.5, max: 300_000, noNaN: true }), { minLength: 40, maxLength: 40 }),
    usdPerQuote: fc.constantFrom(1, 0.5, 2, 1.0004),
  })
  .map(({ mid, halfSpread, bidGaps, askGaps, bidUsd, askUsd, usdPerQuote }) => {
    let away = halfSpread;
    const bids: Level[] = bidGaps.map((gap, i) => {
      const price = mid * (1 - away);
      away += gap;
      return [price, bidUsd[i]! / usdPerQuote / price];
    });
    away = halfSpread;
    const asks: Level[] = askGaps.map((gap, i) => {
      const price = mid * (1 + away);
      away += gap;
      return [price, askUsd[i]! / usdPerQuote / price];
    });
    return { book: { bids: bids.filter(([p]) => p > 0), asks }, usdPerQuote };
  })
  .filter(({ book }) => book.bids.length > 0);

test('random books: the stored score equals the methodology recomputed from the levels', () => {
  let scored = 0;
  fc.assert(
    fc.property(bookArb, ({ book, usdPerQuote }) => {
      const score = marketQuality(book, usdPerQuote)!.liquidityScore;
      expect(score).toBeGreaterThanOrEqual(0);
      expect(score).toBeLessThanOrEqual(1000);
      expectMatches(score, expectedScore(book, usdPerQuote));
      if (score > 0) scored++;
    }),
    { numRuns: 500 },
  );
  // The generator reaches scored books, not only the zero branch.
  expect(scored).toBeGreaterThan(100);
});
