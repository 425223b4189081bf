// SIMULATED history for the demo, so that what needs days of data (fear & greed, 7 d and 30 d
// changes, charts, the 24 h changes of /v1/global and /v1/market-status) has some on a fresh
// start. Per simulated asset: a random walk run backwards from the market model's current price,
// as trades every `stepMs` on two of the simulated venues' markets, inserted into `trades` like the
// aggregator's own rows (so every view derives from them as from live trades). Never market data.
//
// Complete or resumed, never partial: what to seed (seed, end time, end prices, batch size) is
// recorded in `demo_history` before the first insert, and `complete` only once every trade is
// verified to be stored. A start that finds a seeding without `complete` (the process was killed)
// inserts the same batches again with the same insert_deduplication_token, so the store drops
// those it already holds. Nothing else inserts into `trades` while the demo seeds (infra/roles/main.ts
// seeds before the sinks start), so every batch is well inside the table's deduplication window.
import type { TradeRow } from '../aggregate/tradeSink.ts';
import { assetIdForVenueTicker } from '../infra/catalog/catalog.ts';
import type { Logger } from '../infra/log.ts';
import type { Store } from '../infra/store.ts';
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
  /** Trades per insert (default 10,000). */
  batchRows?: number;
  /** Gets a progress line every few inserts. */
  log?: Logger;
}

/** What one seeding writes, fixed when it starts: a resumed seeding writes exactly the same trades. */
interface HistoryPlan {
  seed: number;
  endsAt: number;
  days: number;
  stepMs: number;
  tickers: string[];
  endPrices: number[];
  trades: number;
  batchRows: number;
}


/** Seeding did not store exactly the planned trades: the store needs a look, the demo does not start on it. */
export class DemoHistoryIncompleteError extends Error {
  override name = 'DemoHistoryIncompleteError';
}

/** Two venues, one USD and one USDT market each, so the index has two venues behind every price. */
const historyMarkets = [
  { venue: 'coinbase', symbol: (t: string) => `${t}-USD`, quote: 'USD' },
  { venue: 'binance', symbol: (t: string) => `${t}USDT`, quote: 'USDT' },
] as const;

/** About 3 % a day, the order of magnitude of large-cap crypto volatility. */
const dailyVolatility = 0.03;
const defaultBatchRows = 10_000;
const progressEveryBatches = 5;
const tradeIdPrefix = 'demo-history-';

const stepsOf = (plan: Pick<HistoryPlan, 'days' | 'stepMs'>) => Math.floor((plan.days * 86_400_000) / plan.stepMs);

/**
 * Seeds the history on a demo's first start (a store without trades), or completes a seeding that
 * was cut short. Returns the trades of the history when it seeded or completed one, 0 when there
 * was nothing to do (seeded before, or a store that holds trades and no seeding).
 */
export async function seedDemoHistory(store: Store, options: DemoHistoryOptions): Promise<number> {
  const recorded = await recordedSeeding(store);
  if (recorded?.complete) return 0;
  let plan = recorded?.plan;
  if (plan) {
    options.log?.warn({ trades: plan.trades, seed: plan.seed }, 'a seeding of SIMULATED demo history was cut short: completing it');
  } else {
    const [held] = await store.rows<{ n: number }>('SELECT count() AS n FROM trades');
    if ((held?.n ?? 0) > 0) return 0;
    plan = newPlan(options);
    await record(store, 'started', plan);
  }

  const batches = Math.ceil(plan.trades / plan.batchRows);
  let batch = 0;
  let rows: TradeRow[] = [];
  const insert = async () => {
    await store.insert('trades', rows, `${tradeIdPrefix}${plan.seed}-${batch}`);
    batch += 1;
    rows = [];
    if (batch % progressEveryBatches === 0 || batch === batches)
      options.log?.info({ batches: `${batch}/${batches}`, trades: `${Math.min(batch * plan.batchRows, plan.trades)}/${plan.trades}` }, 'seeding SIMULATED demo history');
  };
  for (const row of historyTrades(plan)) {
    rows.push(row);
    if (rows.length === plan.batchRows) await insert();
  }
  if (rows.length > 0) await insert();

  await verify(store, plan);
  await record(store, 'complete', plan);
  return plan.trades;
}

function newPlan(options: DemoHistoryOptions): HistoryPlan {
  const tickers = (options.tickers ?? simulatedTickers).filter((t) => assetIdForVenueTicker('binance', t) !== undefined);
  const plan = {
    seed: options.seed,
    endsAt: options.now,
    days: options.days,
    stepMs: options.stepMs,
    tickers,
    endPrices: tickers.map((t) => options.priceOf(t)),
    batchRows: options.batchRows ?? defaultBatchRows,
  };
  return { ...plan, trades: tickers.length * stepsOf(plan) * historyMarkets.length };
}

/** The history's trades, in the same order for the same plan. */
function* historyTrades(plan: HistoryPlan): Generator<TradeRow> {
  const random = seededRandom(plan.seed);
  const steps = stepsOf(plan);
  const sigma = dailyVolatility * Math.sqrt(plan.stepMs / 86_400_000);
  for (const [k, ticker] of plan.tickers.entries()) {
    const asset = assetIdForVenueTicker('binance', ticker)!;
    // Backwards from today's price, so the history meets the live market where it is now.
    const prices = [plan.endPrices[k]!];
    for (let i = 1; i < steps; i++) prices.push(prices[i - 1]! * Math.exp(sigma * (random() + random() + random() - 1.5) * 2));
    prices.reverse();
    for (const [i, price] of prices.entries()) {
      const ts = plan.endsAt - (steps - i) * plan.stepMs;
      for (const m of historyMarkets) {
        const quantity = (2_000 + 18_000 * random()) / price;
        yield {
          venue: m.venue, market: m.symbol(ticker), asset, quote: m.quote, trade_id: `${tradeIdPrefix}${i}`,
          ts, received_at: ts, price, quantity, side: random() < 0.5 ? 'buy' : 'sell',
        };
      }
    }
  }
}

/** Every planned trade is stored, once. */
async function verify(store: Store, plan: HistoryPlan): Promise<void> {
  const [stored] = await store.rows<{ n: number; distinct: number }>(
    `SELECT count() AS n, uniqExact(venue, market, trade_id) AS distinct FROM trades
     WHERE venue IN {venues:Array(String)} AND startsWith(trade_id, {prefix:String})
       AND ts >= fromUnixTimestamp64Milli({from:Int64}, 'UTC') AND ts < fromUnixTimestamp64Milli({to:Int64}, 'UTC')`,
    { venues: historyMarkets.map((m) => m.venue), prefix: tradeIdPrefix, from: plan.endsAt - stepsOf(plan) * plan.stepMs, to: plan.endsAt },
  );
  if (stored?.n !== plan.trades || stored.distinct !== plan.trades)
    throw new DemoHistoryIncompleteError(`the demo history should hold ${plan.trades} trades; the store holds ${stored?.n} (${stored?.distinct} distinct)`);
}

async function record(store: Store, state: 'started' | 'complete', plan: HistoryPlan): Promise<void> {
  await store.insert('demo_history', [
    {
      state, seed: plan.seed, ends_at: plan.endsAt, days: plan.days, step_ms: plan.stepMs, tickers: plan.tickers,
      end_prices: plan.endPrices, trades: plan.trades, batch_rows: plan.batchRows, written_at: Date.now(),
    },
  ]);
}

/** The seeding recorded in the store, if any: what it seeds, and whether it completed. */
async function recordedSeeding(store: Store): Promise<{ plan: HistoryPlan; complete: boolean } | undefined> {
  const [row] = await store.rows<HistoryPlan & { complete: number }>(
    `SELECT seed, toUnixTimestamp64Milli(ends_at) AS endsAt, days, step_ms AS stepMs, tickers, end_prices AS endPrices,
            trades, batch_rows AS batchRows, state = 'complete' AS complete
     FROM demo_history ORDER BY state DESC, written_at DESC LIMIT 1`,
  );
  if (!row) return undefined;
  const { complete, ...plan } = row;
  return { plan, complete: complete === 1 };
}
