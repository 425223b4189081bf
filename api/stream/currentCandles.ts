import { readFileSync } from 'node:fs';
import { usdQuotes } from '../../infra/currency/currencies.ts';
import type { Store } from '../../infra/store.ts';
import { candleLimits, forwardFill, intervalMs, type Candle, type CandleInterval } from '../routes/ohlc.ts';
import type { StreamCandle } from './protocol.ts';

const currentCandlesSql = readFileSync(new URL('./currentCandles.sql', import.meta.url), 'utf8');

/**
 * The index candle of the interval that holds `now`, per asset: the last candle that
 * /v1/coins/{id}/ohlc returns for it (forwardFill repeats the previous close, volume 0, when the
 * interval has no trade yet). Looks back as many intervals as ohlc returns; an asset without a
 * trade in them has no current candle. One query for every asset of the interval.
 */
export async function loadCurrentCandles(store: Store, interval: CandleInterval, assets: readonly string[], now: number): Promise<StreamCandle[]> {
  if (assets.length === 0) return [];
  const stepMs = intervalMs[interval];
  const rows = await store.rows<Candle & { assetId: string }>(currentCandlesSql, {
    table: `candles_${interval}`,
    assets,
    usd_quotes: usdQuotes,
    from_s: Math.floor((now - candleLimits[interval] * stepMs) / 1000),
  });
  return rows.flatMap(({ assetId, ...latest }) => forwardFill([latest], stepMs, now, 1).map((candle) => ({ assetId, ...candle })));
}
