import type { StoreCalls } from '../../infra/store.ts';
import { candleBucketMs } from './indexCloses.ts';
import { loadIndexCandles, type IndexCandle } from './indexCandles.ts';

/** Candle intervals (spec 4.4) and how many of the most recent buckets one series holds. */
export const candleLimits = { '1m': 1440, '5m': 864, '15m': 672, '1h': 720, '4h': 540, '1d': 365, '1w': 260 } as const;
export type CandleInterval = keyof typeof candleLimits;
export const candleIntervals = Object.keys(candleLimits) as CandleInterval[];
/** Bucket lengths; 1w buckets start on Mondays (migration 0015), so 7-day steps keep their alignment. */
export const intervalMs = Object.fromEntries(candleIntervals.map((i) => [i, candleBucketMs[`candles_${i}`]])) as Record<CandleInterval, number>;

/**
 * Gapless candles (Coin Metrics' convention, aggregate/METHODOLOGY.md): each interval without a
 * trade, between two candles or after the last one up to the interval that holds `now`, repeats
 * the previous close with volume 0. Keeps the most recent `limit`.
 */
export function forwardFill(candles: readonly IndexCandle[], stepMs: number, now: number, limit: number): IndexCandle[] {
  const first = candles[0];
  const last = candles.at(-1);
  if (!first || !last) return [];
  // The interval that holds now, on the candles' own grid (or the last candle, should one be ahead of our clock).
  const end = Math.max(last.timestamp, first.timestamp + Math.floor((now - first.timestamp) / stepMs) * stepMs);
  return fillGrid(candles, stepMs, Math.max(first.timestamp, end - (limit - 1) * stepMs), end);
}

/** The intervals start, start + step, ... end, gapless; candles before `start` only carry their close into it. */
export function fillGrid(candles: readonly IndexCandle[], stepMs: number, start: number, end: number): IndexCandle[] {
  const filled: IndexCandle[] = [];
  let previous: IndexCandle | undefined;
  let i = 0;
  for (let t = start; t <= end; t += stepMs) {
    while (i < candles.length && candles[i]!.timestamp < t) previous = candles[i++];
    if (candles[i]?.timestamp === t) {
      previous = candles[i++]!;
      filled.push(previous);
    } else if (previous) {
      filled.push({ timestamp: t, open: previous.close, high: previous.close, low: previous.close, close: previous.close, volume: 0 });
    }
  }
  return filled;
}

/** Index candles of an asset, the most recent candleLimits[interval], oldest first, gapless up to `now`; an asset without trades has none. */
export async function loadCandles(store: StoreCalls, assetId: string, interval: CandleInterval, now: number): Promise<IndexCandle[]> {
  const limit = candleLimits[interval];
  const traded = await loadIndexCandles(store, { table: `candles_${interval}`, assets: [assetId], limit });
  return forwardFill(traded.get(assetId) ?? [], intervalMs[interval], now, limit);
}
