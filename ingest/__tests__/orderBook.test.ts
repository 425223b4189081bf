// The book keeps its prices in order as levels come and go; checked against a plain model (a map
// per side, sorted when read) over many random updates, deletions and truncations.
import { expect, test } from 'vitest';
import { OrderBook, type RawLevel } from '../orderBook.ts';

function model() {
  const sides = { bid: new Map<number, RawLevel>(), ask: new Map<number, RawLevel>() };
  const sorted = (side: 'bid' | 'ask') => [...sides[side]].sort((a, b) => (side === 'bid' ? b[0] - a[0] : a[0] - b[0]));
  return {
    set(side: 'bid' | 'ask', raw: RawLevel) {
      if (Number(raw[1]) === 0) sides[side].delete(Number(raw[0]));
      else sides[side].set(Number(raw[0]), raw);
    },
    truncate(n: number) {
      for (const side of ['bid', 'ask'] as const) for (const [price] of sorted(side).slice(n)) sides[side].delete(price);
    },
    topRaw: (side: 'bid' | 'ask', n: number) => sorted(side).slice(0, n).map(([, raw]) => raw),
    size: (side: 'bid' | 'ask') => sides[side].size,
  };
}

test('top levels, sizes and truncation agree with a sorted model over random updates', () => {
  const book = new OrderBook();
  const expected = model();
  let seed = 20261124;
  const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  for (let i = 0; i < 20_000; i++) {
    const side = random() < 0.5 ? 'bid' : 'ask';
    // Prices written as venues do (trailing zeros kept): the raw strings come back as given.
    const raw: RawLevel = [(95 + Math.floor(random() * 1_000) / 100).toFixed(3), random() < 0.3 ? '0.000' : (1 + Math.floor(random() * 50) / 10).toFixed(3)];
    book.set(side, raw);
    expected.set(side, raw);
    if (i % 2_000 === 1_999) {
      book.truncate(200);
      expected.truncate(200);
    }
    if (i % 97 === 0) {
      for (const s of ['bid', 'ask'] as const) {
        expect(book.topRaw(s, 25)).toEqual(expected.topRaw(s, 25));
        expect(book.size(s)).toBe(expected.size(s));
      }
    }
  }
  expect(book.top('bid', 3)).toEqual(expected.topRaw('bid', 3).map(([p, q]) => [Number(p), Number(q)]));
  book.clear();
  expect([book.size('bid'), book.size('ask'), book.topRaw('ask', 5)]).toEqual([0, 0, []]);
});
