// SIMULATED history for the demo, so that what needs days of data (fear & greed, 7 d and 30 d
// changes, charts, the 24 h changes of /v1/global and /v1/market-status) has some on a fresh
// start. Per simulated asset: a random walk run backwards from the market model's current price,
// as trades every `stepMs` on two of the simulated venues' markets, inserted into `trades` like the
// aggregator's own rows (so every view derives from them as from live trades). Never market data.
import { assetIdForVenueTicker } from '../../infra/catalog/catalog.ts';
import type { Store } from '../../infra/store.ts';
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

/** Two venues, one USD and one USDT market each, so the index has two venues behind every price. */
const historyMarkets = [
  { venue: 'coinbase', symbol: (t: string) => `${t}-USD`, quote: 'USD' },
  { venue: 'binance', symbol: (t: string) => `${t}USDT`, quote: 'USDT' },
] as const;

/** About 3 % a day, the order of magnitude of large-cap crypto volatility. */
const dailyVolatility = 0.03;
const insertRows = 50_000;

/**
 * Inserts the history when the store holds no trade yet (a demo's first start); returns how many
 * trades it inserted (0 on a store that already has trades).
 */
export async function seedDemoHistory(store: Store, options: DemoHistoryOptions): Promise<number> {
  const [held] = await store.rows<{ n: number }>('SELECT count() AS n FROM trades');
  if ((held?.n ?? 0) > 0) return 0;
  const random = seededRandom(options.seed);
  const steps = Math.floor((options.days * 86_400_000) / options.stepMs);
  const sigma = dailyVolatility * Math.sqrt(options.stepMs / 86_400_000);
  const rows = [];
  for (const ticker of options.tickers ?? simulatedTickers) {
    const asset = assetIdForVenueTicker('binance', ticker);
    if (!asset) continue;
    // Backwards from today's price, so the history meets the live market where it is now.
    const prices = [options.priceOf(ticker)];
    for (let i = 1; i < steps; i++) prices.push(prices[i - 1]! * Math.exp(sigma * (random() + random() + random() - 1.5) * 2));
    prices.reverse();
    for (const [i, price] of prices.entries()) {
      const ts = options.now - (steps - i) * options.stepMs;
      for (const m of historyMarkets) {
        const quantity = (2_000 + 18_000 * random()) / price;
        rows.push({
          venue: m.venue, market: m.symbol(ticker), asset, quote: m.quote, trade_id: `demo-history-${i}`,
          ts, received_at: ts, price, quantity, side: random() < 0.5 ? 'buy' : 'sell',
        });
      }
    }
  }
  for (let i = 0; i < rows.length; i += insertRows) await store.insert('trades', rows.slice(i, i + insertRows), `demo-history-${options.seed}-${i}`);
  return rows.length;
}
