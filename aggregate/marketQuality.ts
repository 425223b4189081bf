import { z } from 'zod';
import type { BookEvent } from '../infra/events.ts';

/** Order sizes (USD) whose cost to trade is measured, as Coin Metrics' and Kaiko's slippage sizes. */
export const costSizesUsd = [10_000, 100_000, 1_000_000] as const;

/**
 * Parameters of the liquidity score (aggregate/METHODOLOGY.md, "Market quality and exchange
 * score"; methodology.md section 2.4, on CoinMarketCap's published model: simulated slippage,
 * weighted to $100-$10k, less weight out to $200k, balance penalty, 0 under a $100 book).
 */
export const liquidityScoreParamsSchema = z
  .object({
    /** Order sizes in USD whose cost enters the score. */
    sizesUsd: z.array(z.number().positive()).min(1).default([100, 1_000, 10_000, 100_000, 200_000]),
    /** Weight of each size, in the same order. */
    weights: z.array(z.number().nonnegative()).min(1).default([0.25, 0.25, 0.25, 0.15, 0.1]),
    /** g(c) = 1 / (1 + c / costScaleBps): a cost of this many bps halves a size's credit. */
    costScaleBps: z.number().positive().default(10),
    /** Lowest balance factor (min side / max side of the 2 % depth). */
    balanceFloor: z.number().min(0).max(1).default(0.5),
    /** Below this many USD on both sides within `bookRange` of the mid the score is 0. */
    minBookUsd: z.number().nonnegative().default(100),
    bookRange: z.number().positive().default(0.1),
  })
  .refine((p) => p.sizesUsd.length === p.weights.length, 'sizesUsd and weights must have the same length')
  .refine((p) => p.weights.some((w) => w > 0), 'at least one weight must be above 0');
export type LiquidityScoreParams = z.infer<typeof liquidityScoreParamsSchema>;
export const defaultLiquidityScoreParams: LiquidityScoreParams = liquidityScoreParamsSchema.parse({});

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
  /** 0-1000, integer: see `liquidityScore`. */
  liquidityScore: number;
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

type Book = Pick<BookEvent, 'bids' | 'asks'>;

/**
 * Liquidity score of a two-sided book with mid `mid`, 0 (illiquid) to 1000:
 * round(1000 x balance x sum_k a_k g(c_k) / sum_k a_k), where c_k is the mean of the buy and sell
 * cost (bps vs the mid) of size k, g(c) = 1 / (1 + c / costScaleBps), g = 0 for a size either
 * side cannot fill, and balance = min / max of the 2 % bid and ask depth, floored at balanceFloor
 * (both sides empty within 2 %: the floor). 0 when both sides within bookRange of the mid hold
 * less than minBookUsd.
 */
function liquidityScore(book: Book, mid: number, usdPerQuote: number, params: LiquidityScoreParams): number {
  const bookUsd = (depth(book.bids, mid, params.bookRange, 'bid') + depth(book.asks, mid, params.bookRange, 'ask')) * usdPerQuote;
  if (bookUsd < params.minBookUsd) return 0;
  let credit = 0;
  let weights = 0;
  params.sizesUsd.forEach((usd, k) => {
    const weight = params.weights[k]!;
    const buy = cost(book.asks, mid, usd / usdPerQuote, 'buy');
    const sell = cost(book.bids, mid, usd / usdPerQuote, 'sell');
    if (buy !== null && sell !== null) credit += weight / (1 + (buy + sell) / 2 / params.costScaleBps);
    weights += weight;
  });
  const bid2 = depth(book.bids, mid, 0.02, 'bid');
  const ask2 = depth(book.asks, mid, 0.02, 'ask');
  const ratio = Math.max(bid2, ask2) > 0 ? Math.min(bid2, ask2) / Math.max(bid2, ask2) : 0;
  return Math.round((1000 * Math.max(params.balanceFloor, ratio) * credit) / weights);
}

/**
 * Spread, depth, cost to trade and liquidity score of one book (methodology.md section 2:
 * mid-referenced, as Coin Metrics). `usdPerQuote` converts the quote currency; undefined when the
 * book has no two sides.
 */
export function marketQuality(book: Book, usdPerQuote: number, params: LiquidityScoreParams = defaultLiquidityScoreParams): MarketQuality | undefined {
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
    liquidityScore: liquidityScore(book, mid, usdPerQuote, params),
  };
}
