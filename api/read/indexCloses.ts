import { readFileSync } from 'node:fs';
import { usdQuotes } from '../../aggregate/currency/currencies.ts';
import type { StoreCalls } from '../../infra/store.ts';

const indexClosesSql = readFileSync(new URL('./indexCloses.sql', import.meta.url), 'utf8');

const minuteMs = 60_000;
const dayMs = 1_440 * minuteMs;
/** Bucket length of each candle table. */
export const candleBucketMs = {
  candles_1m: minuteMs,
  candles_5m: 5 * minuteMs,
  candles_15m: 15 * minuteMs,
  candles_1h: 60 * minuteMs,
  candles_4h: 240 * minuteMs,
  candles_1d: dayMs,
  candles_1w: 7 * dayMs,
} as const;
export type CandleTable = keyof typeof candleBucketMs;

/** Start of the bucket of `table` that holds `t`; 1w buckets start on Mondays (migration 0015), and 1970-01-01 was a Thursday. */
export function bucketStart(table: CandleTable, t: number): number {
  const offset = table === 'candles_1w' ? 4 * dayMs : 0;
  const step = candleBucketMs[table];
  return Math.floor((t - offset) / step) * step + offset;
}

/** An index close: the last trade on the index markets in the bucket starting at `t` (unix ms). */
export interface IndexClose {
  t: number;
  close: number;
}

/** Index closes per asset of the buckets of `table` starting in [fromMs, toMs], oldest first. */
export async function loadIndexCloses(store: StoreCalls, table: CandleTable, assets: readonly string[], fromMs: number, toMs: number): Promise<Map<string, IndexClose[]>> {
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
