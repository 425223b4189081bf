/** [price, quantity] */
export type Level = [number, number];
/** [price, quantity] as the venue wrote them: checksums are computed over these strings. */
export type RawLevel = [string, string];

interface Entry {
  quantity: number;
  raw: RawLevel;
}

/** One side: its levels by price, and their prices kept in order, best first. */
interface Side {
  levels: Map<number, Entry>;
  prices: number[];
  /** True when `a` is a better price than `b` on this side. */
  better: (a: number, b: number) => boolean;
}

/** Where `price` is, or would go, in the side's ordered prices (binary search). */
function indexOf(side: Side, price: number): number {
  let lo = 0;
  let hi = side.prices.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (side.better(side.prices[mid]!, price)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * A level-2 book: absolute quantity per price on each side; a quantity of 0 removes the level.
 * Prices are kept in order as levels come and go (a few per message), so the top levels, which
 * checksums read at every message, cost no sort.
 */
export class OrderBook {
  readonly #bids: Side = { levels: new Map(), prices: [], better: (a, b) => a > b };
  readonly #asks: Side = { levels: new Map(), prices: [], better: (a, b) => a < b };

  set(side: 'bid' | 'ask', raw: RawLevel): void {
    const s = side === 'bid' ? this.#bids : this.#asks;
    const price = Number(raw[0]);
    const quantity = Number(raw[1]);
    // A price that is not a number has no place in the order (and no venue sends one).
    if (!Number.isFinite(price)) return;
    const known = s.levels.has(price);
    if (quantity === 0) {
      if (!known) return;
      s.levels.delete(price);
      s.prices.splice(indexOf(s, price), 1);
      return;
    }
    if (!known) s.prices.splice(indexOf(s, price), 0, price);
    s.levels.set(price, { quantity, raw });
  }

  clear(): void {
    for (const s of [this.#bids, this.#asks]) {
      s.levels.clear();
      s.prices.length = 0;
    }
  }

  size(side: 'bid' | 'ask'): number {
    return (side === 'bid' ? this.#bids : this.#asks).prices.length;
  }

  /** The best `n` levels of a side, best first. */
  top(side: 'bid' | 'ask', n: number): Level[] {
    const s = side === 'bid' ? this.#bids : this.#asks;
    return s.prices.slice(0, n).map((price) => [price, s.levels.get(price)!.quantity]);
  }

  /** The best `n` levels of a side as the venue wrote them, best first. */
  topRaw(side: 'bid' | 'ask', n: number): RawLevel[] {
    const s = side === 'bid' ? this.#bids : this.#asks;
    return s.prices.slice(0, n).map((price) => s.levels.get(price)!.raw);
  }

  /** Keeps the best `n` levels of each side: venues that maintain a fixed depth do not delete what falls out of it. */
  truncate(n: number): void {
    for (const s of [this.#bids, this.#asks]) {
      if (s.prices.length <= n) continue;
      for (const price of s.prices.splice(n)) s.levels.delete(price);
    }
  }
}
