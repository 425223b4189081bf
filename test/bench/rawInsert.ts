// The bare ceiling the pipeline benchmarks compare with: trades inserted straight into the store's
// `trades` table (its materialized views included), batch after batch, nothing else in the way.
import type { TradeEvent } from '../../infra/events.ts';
import type { Store } from '../../infra/store.ts';

export const tradeRow = (e: TradeEvent) => ({
  venue: e.venue, market: e.market, asset: e.asset, quote: e.quote, trade_id: e.tradeId,
  ts: e.ts, received_at: e.receivedAt, price: e.price, quantity: e.quantity, side: e.side,
});

/** Seconds taken to insert `trades` in batches of `batchRows` (each batch its own dedup token, under `token`). */
export async function timeRawInsert(store: Store, trades: readonly TradeEvent[], batchRows: number, token: string): Promise<number> {
  const start = performance.now();
  for (let i = 0; i < trades.length; i += batchRows) await store.insert('trades', trades.slice(i, i + batchRows).map(tradeRow), `${token}-${i}`);
  return (performance.now() - start) / 1000;
}
