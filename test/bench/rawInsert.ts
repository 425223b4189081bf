// The bare ceiling the pipeline benchmarks compare with: trades inserted straight into the store's
// `trades` table (its materialized views included), batch after batch, nothing else in the way.
import { tradeRow } from '../../aggregate/tradeSink.ts';
import type { TradeEvent } from '../../infra/events.ts';
import type { Store } from '../../infra/store.ts';

/** Seconds taken to insert `trades` in batches of `batchRows` (each batch its own dedup token, under `token`). */
export async function timeRawInsert(store: Store, trades: readonly TradeEvent[], batchRows: number, token: string): Promise<number> {
  const start = performance.now();
  for (let i = 0; i < trades.length; i += batchRows) await store.insert('trades', trades.slice(i, i + batchRows).map(tradeRow), `${token}-${i}`);
  return (performance.now() - start) / 1000;
}
