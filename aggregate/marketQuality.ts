import type { BookEvent } from '../infra/events.ts';

/** Order sizes (USD) whose cost to trade is measured, as Coin Metrics' and Kaiko's slippage sizes. */
export const costSizesUsd = [10_000, 100_000, 1_000_000] as const;

export interface MarketQuality {
  /** (best ask - best bid) / mid, in bps. */
  spreadBps: number;
  /** USD value of the bids at or above mid x (1 - 2 %), and of the asks at or below mid x (1 + 2 %). */
  depthBid: number;
  depthAsk: number;
  /** The same within 1 % of the mid. */
  depthBid1: number;
  depthAsk1: number;
  /** Size (USD, as a string key) -> cost in bps against the mid; null when the visible book cannot fill it. */
  costBuy: Record<string, number | null>;
  costSell: Record<string, number | null>;
}

/** Depth within `fraction` of the mid on one side, in quote currency. */
function depth(levels: readonly [number, number][], mid: number, fraction: number, side: 'bid' | 'ask'): number {
  let sum = 0;
  for (const [price, qty] of levels) {
    if (side === 'bid' ? price < mid * (1 - fraction) : price > mid * (1 + fraction)) break;
    sum += price * qty;
  }
  return sum;
}

/** Walks one side until `notional` is filled: cost of the average fill against the mid, in bps. */
function cost(levels: readonly [number, number][], mid: number, notional: number, side: 'buy' | 'sell'): number | null {
  let filledQuote = 0;
  let filledBase = 0;
  for (const [price, qty] of levels) {
    const take = Math.min(qty, (notional - filledQuote) / price);
    filledQuote += take * price;
    filledBase += take;
    if (filledQuote >= notional * (1 - 1e-12)) {
      const average = filledQuote / filledBase;
      return side === 'buy' ? (average / mid - 1) * 10_000 : (1 - average / mid) * 10_000;
    }
  }
  return null;
}

/**
 * Spread, depth and cost to trade of one book (methodology.md section 2: mid-referenced, as Coin
 * Metrics). `usdPerQuote` converts the quote currency; undefined when the book has no two sides.
 */
export function marketQuality(book: Pick<BookEvent, 'bids' | 'asks'>, usdPerQuote: number): MarketQuality | undefined {
  const bestBid = book.bids[0]?.[0];
  const bestAsk = book.asks[0]?.[0];
  if (bestBid === undefined || bestAsk === undefined || bestAsk <= bestBid) return undefined;
  const mid = (bestBid + bestAsk) / 2;
  const costs = (side: 'buy' | 'sell') =>
    Object.fromEntries(costSizesUsd.map((usd) => [String(usd), cost(side === 'buy' ? book.asks : book.bids, mid, usd / usdPerQuote, side)]));
  return {
    spreadBps: ((bestAsk - bestBid) / mid) * 10_000,
    depthBid: depth(book.bids, mid, 0.02, 'bid') * usdPerQuote,
    depthAsk: depth(book.asks, mid, 0.02, 'ask') * usdPerQuote,
    depthBid1: depth(book.bids, mid, 0.01, 'bid') * usdPerQuote,
    depthAsk1: depth(book.asks, mid, 0.01, 'ask') * usdPerQuote,
    costBuy: costs('buy'),
    costSell: costs('sell'),
  };
}
