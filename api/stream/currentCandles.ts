import type { StoreCalls } from '../../infra/store.ts';
import { candleLimits, forwardFill, intervalMs, type CandleInterval } from '../read/candleSeries.ts';
import { loadIndexCandles } from '../read/indexCandles.ts';
import type { StreamCandle } from './protocol.ts';

/**
 * The index candle of the interval that holds `now`, per asset: the last candle that
 * /v1/coins/{id}/ohlc returns for it (forwardFill repeats the previous close, volume 0, when the
 * interval has no trade yet). Looks back as many intervals as ohlc returns; an asset without a
 * trade in them has no current candle. One query for every asset of the interval.
 */
export async function loadCurrentCandles(store: StoreCalls, interval: CandleInterval, assets: readonly string[], now: number): Promise<StreamCandle[]> {
  if (assets.length === 0) return [];
  const stepMs = intervalMs[interval];
  const latest = await loadIndexCandles(store, { table: `candles_${interval}`, assets, from: now - candleLimits[interval] * stepMs, limit: 1 });
  return [...latest].flatMap(([assetId, candles]) => forwardFill(candles, stepMs, now, 1).map((candle) => ({ assetId, ...candle })));
}
