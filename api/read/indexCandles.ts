import { readFileSync } from 'node:fs';
import { usdQuotes } from '../../aggregate/currency/currencies.ts';
import type { StoreCalls } from '../../infra/store.ts';
import { latestStoredTime } from '../timeRange.ts';
import type { CandleTable } from './indexCloses.ts';

const indexCandlesSql = readFileSync(new URL('./indexCandles.sql', import.meta.url), 'utf8');
const indexBucketBeforeSql = readFileSync(new URL('./indexBucketBefore.sql', import.meta.url), 'utf8');

/** An index candle in USD: the markets of the index price merged over the bucket starting at `timestamp` (unix ms). */
export interface IndexCandle {
  timestamp: number;
  open: number;
  high: number;
  low: number;
  close: number;
  /** Base asset units. */
  volume: number;
}

/** Which buckets of `table` to read: per asset, the latest `limit` that start in [from, to), unix ms (`from` taken down to its whole second). */
export interface IndexCandleQuery {
  table: CandleTable;
  assets: readonly string[];
  /** Default: our first bucket. */
  from?: number;
  /** Default: the last a DateTime holds. */
  to?: number;
  limit: number;
}

/** Index candles per asset, oldest first; an asset without a trade in the buckets asked has no entry. */
export async function loadIndexCandles(store: StoreCalls, { table, assets, from = 0, to = latestStoredTime, limit }: IndexCandleQuery): Promise<Map<string, IndexCandle[]>> {
  const rows = await store.rows<IndexCandle & { asset: string }>(indexCandlesSql, {
    table,
    assets,
    usd_quotes: usdQuotes,
    from_s: Math.floor(from / 1000),
    to_s: Math.ceil(to / 1000),
    limit,
  });
  const byAsset = new Map<string, IndexCandle[]>();
  for (const { asset, ...candle } of rows) {
    let list = byAsset.get(asset);
    if (!list) byAsset.set(asset, (list = []));
    list.push(candle);
  }
  return byAsset;
}

/** Start (unix ms) of the latest bucket of `table` with an index candle of `asset` before `before`; 0 when there is none. */
export async function latestIndexBucketBefore(store: StoreCalls, table: CandleTable, asset: string, before: number): Promise<number> {
  const [row] = await store.rows<{ start: number }>(indexBucketBeforeSql, { table, asset, usd_quotes: usdQuotes, before_s: Math.ceil(before / 1000) });
  return (row?.start ?? 0) * 1000;
}
