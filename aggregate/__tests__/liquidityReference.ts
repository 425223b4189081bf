// The liquidity score of aggregate/METHODOLOGY.md recomputed from a book's levels, in plain
// TypeScript and apart from aggregate/marketQuality.ts, for the tests that check what it stores.
import { expect } from 'vitest';

export type Level = [price: number, quantity: number];
export interface Book {
  bids: Level[];
  asks: Level[];
}

const sizes = [100, 1_000, 10_000, 100_000, 200_000];
const weights = [0.25, 0.25, 0.25, 0.15, 0.1];

/** Quote spent and base received taking `levels` in order until `quote` is spent; null when they run out. */
function take(levels: Level[], quote: number): { base: number } | null {
  let left = quote;
  let base = 0;
  for (const [price, qty] of levels) {
    const spend = Math.min(left, price * qty);
    base += spend / price;
    left -= spend;
    if (left <= quote * 1e-12) return { base };
  }
  return null;
}

/** The score as the methodology writes it (default parameters), unrounded. */
export function expectedLiquidityScore(book: Book, usdPerQuote: number): number {
  const mid = (book.bids[0]![0] + book.asks[0]![0]) / 2;
  const within = (levels: Level[], test: (p: number) => boolean) => levels.filter(([p]) => test(p)).reduce((s, [p, q]) => s + p * q, 0);
  const book10 = (within(book.bids, (p) => p >= mid * 0.9) + within(book.asks, (p) => p <= mid * 1.1)) * usdPerQuote;
  if (book10 < 100) return 0;
  let sum = 0;
  for (let k = 0; k < sizes.length; k++) {
    const quote = sizes[k]! / usdPerQuote;
    const buy = take(book.asks, quote);
    const sell = take(book.bids, quote);
    if (!buy || !sell) continue;
    const buyBps = (quote / buy.base / mid - 1) * 10_000;
    const sellBps = (1 - quote / sell.base / mid) * 10_000;
    sum += weights[k]! * (1 / (1 + (buyBps + sellBps) / 2 / 10));
  }
  const bid2 = within(book.bids, (p) => p >= mid * 0.98);
  const ask2 = within(book.asks, (p) => p <= mid * 1.02);
  const balance = Math.max(0.5, Math.max(bid2, ask2) > 0 ? Math.min(bid2, ask2) / Math.max(bid2, ask2) : 0);
  return (1000 * balance * sum) / weights.reduce((s, w) => s + w, 0);
}

/** The stored score is the rounded value; away from a .5 boundary it must be exactly that. */
export function expectMatches(score: number, unrounded: number) {
  expect(Number.isInteger(score)).toBe(true);
  expect(Math.abs(score - unrounded)).toBeLessThanOrEqual(0.5 + 1e-9);
  if (Math.abs(Math.abs(unrounded - Math.round(unrounded)) - 0.5) > 1e-6) expect(score).toBe(Math.round(unrounded));
}
