// SIMULATED history for the demo, so that what needs days of data (fear & greed, 7 d and 30 d
// changes, charts, the 24 h changes of /v1/global and /v1/market-status) has some on a fresh
// start. Per simulated asset: a random walk run backwards from the market model's current price,
// as one trade every `stepMs` on each of two simulated spot markets (Binance and Gate, both
// USDT). Pure: simulator/archiveFiles.ts writes these trades as the venues' archive files, and the
// demo imports them with `npm run import`'s code (infra/roles/demo.ts). Never market data.
import { assetIdForVenueTicker } from '../infra/catalog/catalog.ts';
import { seededRandom, simulatedTickers } from './market.ts';

export interface DemoHistoryOptions {
  /** Days of history, ending `stepMs` before `now`. */
  days: number;
  stepMs: number;
  now: number;
  seed: number;
  /** The model's current USD price of a simulated ticker. */
  priceOf(ticker: string): number;
  tickers?: readonly string[];
}

/** What one history holds, fixed when it is made: the same plan gives the same trades. */
export interface DemoHistoryPlan {
  seed: number;
  /** The last trade of each market is one step before this time (unix ms). */
  endsAt: number;
  days: number;
  stepMs: number;
  tickers: string[];
  /** USD price where each ticker's walk ends, same order as tickers. */
  endPrices: number[];
}

/** The history's venues: two spot markets per asset, so the index has two venues behind every price. */
export const historyVenues = ['binance', 'gate'] as const;
export type HistoryVenue = (typeof historyVenues)[number];

/** Each venue's symbol of a ticker's USDT market, as its collector (and archive) writes it. */
export const historySymbol: Record<HistoryVenue, (ticker: string) => string> = {
  binance: (t) => `${t}USDT`,
  gate: (t) => `${t}_USDT`,
};

/** One trade of the walk on one market: decimal text as the market quotes it. */
export interface HistoryTrade {
  venue: HistoryVenue;
  symbol: string;
  /** 0 for the market's first trade of the history, steps - 1 for its last. */
  index: number;
  ts: number;
  price: string;
  quantity: string;
  side: 'buy' | 'sell';
}

/** About 3 % a day, the order of magnitude of large-cap crypto volatility. */
const dailyVolatility = 0.03;

export const stepsOf = (plan: Pick<DemoHistoryPlan, 'days' | 'stepMs'>) => Math.floor((plan.days * 86_400_000) / plan.stepMs);

/** Trades of a complete history: every step, on every market of every ticker. */
export const tradesOf = (plan: DemoHistoryPlan) => plan.tickers.length * stepsOf(plan) * historyVenues.length;

/** About 6 significant digits of price (the simulator's own markets' rule), at most 8 decimals (Binance's). */
export const priceDecimalsOf = (price: number) => Math.max(2, Math.min(8, 5 - Math.floor(Math.log10(price))));
/** Quantities to about a cent of notional, whole units for the cheapest coins. */
export const quantityDecimalsOf = (price: number) => Math.max(0, Math.min(8, Math.floor(Math.log10(price)) + 2));

export function planDemoHistory(options: DemoHistoryOptions): DemoHistoryPlan {
  // Tickers every history venue's collector maps to an asset: the import refuses the others.
  const tickers = (options.tickers ?? simulatedTickers).filter((t) => historyVenues.every((v) => assetIdForVenueTicker(v, t) !== undefined));
  return { seed: options.seed, endsAt: options.now, days: options.days, stepMs: options.stepMs, tickers, endPrices: tickers.map((t) => options.priceOf(t)) };
}

/** The history's trades, per ticker, step and venue, in the same order for the same plan. */
export function* demoHistoryTrades(plan: DemoHistoryPlan): Generator<HistoryTrade> {
  const random = seededRandom(plan.seed);
  const steps = stepsOf(plan);
  const sigma = dailyVolatility * Math.sqrt(plan.stepMs / 86_400_000);
  for (const [k, ticker] of plan.tickers.entries()) {
    const end = plan.endPrices[k]!;
    const priceDecimals = priceDecimalsOf(end);
    const quantityDecimals = quantityDecimalsOf(end);
    // Backwards from today's price, so the history meets the live market where it is now.
    const prices = [end];
    for (let i = 1; i < steps; i++) prices.push(prices[i - 1]! * Math.exp(sigma * (random() + random() + random() - 1.5) * 2));
    prices.reverse();
    for (const [i, price] of prices.entries()) {
      const ts = plan.endsAt - (steps - i) * plan.stepMs;
      for (const venue of historyVenues) {
        const quantity = Math.max(10 ** -quantityDecimals, (2_000 + 18_000 * random()) / price);
        const side = random() < 0.5 ? 'buy' : 'sell';
        yield { venue, symbol: historySymbol[venue](ticker), index: i, ts, price: price.toFixed(priceDecimals), quantity: quantity.toFixed(quantityDecimals), side };
      }
    }
  }
}
