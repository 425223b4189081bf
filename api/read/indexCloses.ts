import { readFileSync } from 'node:fs';
import { usdQuotes } from '../../infra/currency/currencies.ts';
import type { Store } from '../../infra/store.ts';

const indexClosesSql = readFileSync(new URL('./indexCloses.sql', import.meta.url), 'utf8');

export type CandleTable = 'candles_1m' | 'candles_5m' | 'candles_1h' | 'candles_4h' | 'candles_1d' | 'candles_1w';

/** An index close: the last trade on the index markets in the bucket starting at `t` (unix ms). */
export interface IndexClose {
  t: number;
  close: number;
}

/** Index closes per asset of the buckets of `table` starting in [fromMs, toMs], oldest first. */
export async function loadIndexCloses(store: Store, table: CandleTable, assets: readonly string[], fromMs: number, toMs: number): Promise<Map<string, IndexClose[]>> {
  const rows = await store.rows<IndexClose & { asset: string }>(indexClosesSql, {
    table,
    assets,
    usd_quotes: usdQuotes,
    from_s: Math.max(0, Math.floor(fromMs / 1000)),
    to_s: Math.floor(toMs / 1000),
  });
  const byAsset = new Map<string, IndexClose[]>();
  for (const { asset, t, close } of rows) {
    let list = byAsset.get(asset);
    if (!list) byAsset.set(asset, (list = []));
    list.push({ t, close });
  }
  return byAsset;
}
