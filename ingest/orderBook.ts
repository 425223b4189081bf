/** [price, quantity] */
export type Level = [number, number];
/** [price, quantity] as the venue wrote them: checksums are computed over these strings. */
export type RawLevel = [string, string];

interface Entry {
  quantity: number;
  raw: RawLevel;
}

/** A level-2 book: absolute quantity per price on each side; a quantity of 0 removes the level. */
export class OrderBook {
  readonly #bids = new Map<number, Entry>();
  readonly #asks = new Map<number, Entry>();

  set(side: 'bid' | 'ask', raw: RawLevel): void {
    const levels = side === 'bid' ? this.#bids : this.#asks;
    const price = Number(raw[0]);
    const quantity = Number(raw[1]);
    if (quantity === 0) levels.delete(price);
    else levels.set(price, { quantity, raw });
  }

  clear(): void {
    this.#bids.clear();
    this.#asks.clear();
  }

  size(side: 'bid' | 'ask'): number {
    return (side === 'bid' ? this.#bids : this.#asks).size;
  }

  #sorted(side: 'bid' | 'ask'): [number, Entry][] {
    const levels = [...(side === 'bid' ? this.#bids : this.#asks)];
    return levels.sort(side === 'bid' ? (a, b) => b[0] - a[0] : (a, b) => a[0] - b[0]);
  }

  /** The best `n` levels of a side, best first. */
  top(side: 'bid' | 'ask', n: number): Level[] {
    return this.#sorted(side)
      .slice(0, n)
      .map(([price, e]) => [price, e.quantity]);
  }

  /** The best `n` levels of a side as the venue wrote them, best first. */
  topRaw(side: 'bid' | 'ask', n: number): RawLevel[] {
    return this.#sorted(side)
      .slice(0, n)
      .map(([, e]) => e.raw);
  }

  /** Keeps the best `n` levels of each side: venues that maintain a fixed depth do not delete what falls out of it. */
  truncate(n: number): void {
    for (const side of ['bid', 'ask'] as const) {
      const levels = side === 'bid' ? this.#bids : this.#asks;
      if (levels.size <= n) continue;
      for (const [price] of this.#sorted(side).slice(n)) levels.delete(price);
    }
  }
}
