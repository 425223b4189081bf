/** [price, quantity] */
export type Level = [number, number];

/** A level-2 book: absolute quantity per price on each side; a quantity of 0 removes the level. */
export class OrderBook {
  readonly bids = new Map<number, number>();
  readonly asks = new Map<number, number>();

  set(side: 'bid' | 'ask', price: number, quantity: number): void {
    const levels = side === 'bid' ? this.bids : this.asks;
    if (quantity === 0) levels.delete(price);
    else levels.set(price, quantity);
  }

  clear(): void {
    this.bids.clear();
    this.asks.clear();
  }

  /** The best `n` levels of a side, best first. */
  top(side: 'bid' | 'ask', n: number): Level[] {
    const levels = [...(side === 'bid' ? this.bids : this.asks)];
    levels.sort(side === 'bid' ? (a, b) => b[0] - a[0] : (a, b) => a[0] - b[0]);
    return levels.slice(0, n);
  }
}
