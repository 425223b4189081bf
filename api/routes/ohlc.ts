import type { Config } from '../../infra/config.ts';
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { findAsset } from '../../infra/catalog/catalog.ts';
import { usdQuotes } from '../../infra/currency/currencies.ts';
import type { Store } from '../../infra/store.ts';
import { ApiError, parseParams } from '../errors.ts';
import { loadRate, vsParam } from '../currency.ts';
import type { CachedRoute } from '../responseCache.ts';

const ohlcSql = readFileSync(new URL('./ohlc.sql', import.meta.url), 'utf8');

/** Candle intervals (spec 4.4) and how many of the most recent buckets one response holds. */
export const candleLimits = { '1m': 1440, '5m': 864, '15m': 672, '1h': 720, '4h': 540, '1d': 365, '1w': 260 } as const;
export type CandleInterval = keyof typeof candleLimits;
const intervals = Object.keys(candleLimits) as CandleInterval[];
/** Bucket lengths; 1w buckets start on Mondays (migration 0015), so 7-day steps keep their alignment. */
const intervalMs: Record<CandleInterval, number> = {
  '1m': 60_000,
  '5m': 300_000,
  '15m': 900_000,
  '1h': 3_600_000,
  '4h': 14_400_000,
  '1d': 86_400_000,
  '1w': 604_800_000,
};

/** Candle (spec 2.3). */
const candle = z.object({
  timestamp: z.number().int().describe('unix ms of the interval start'),
  open: z.number().describe('in the served currency'),
  high: z.number().describe('in the served currency'),
  low: z.number().describe('in the served currency'),
  close: z.number().describe('in the served currency'),
  volume: z.number().describe('base asset units traded in the interval (not converted)'),
});
export type Candle = z.infer<typeof candle>;

export const ohlcResponse = z.object({
  candles: z
    .array(candle)
    .describe('oldest first, gapless from the first candle we hold to the interval that holds now: an interval without trades repeats the previous close as open, high, low and close, with volume 0'),
  source: z.string().describe('where the candles come from: our measured trades; for another currency than usd, also where its rate comes from (measured, reference with its date, or index)'),
  rate: z.number().describe('units of the served currency per 1 USD, applied to every USD price of the response (1 for usd); the latest rate, applied to old candles too'),
  currency: z.string().describe('quote currency served'),
});
export type OhlcResponse = z.infer<typeof ohlcResponse>;

const ohlcPath = z.object({ id: z.string().describe('asset id, e.g. bitcoin') });

const ohlcQuery = z.object({
  interval: z.enum(intervals, { error: `must be one of ${intervals.join(', ')}` }).default('1h'),
  vs: vsParam,
});

/**
 * Gapless candles (Coin Metrics' convention, aggregate/METHODOLOGY.md): each interval without a
 * trade, between two candles or after the last one up to the interval that holds `now`, repeats
 * the previous close with volume 0. Keeps the most recent `limit`.
 */
export function forwardFill(candles: readonly Candle[], stepMs: number, now: number, limit: number): Candle[] {
  const first = candles[0];
  const last = candles.at(-1);
  if (!first || !last) return [];
  // The interval that holds now, on the candles' own grid (or the last candle, should one be ahead of our clock).
  const end = Math.max(last.timestamp, first.timestamp + Math.floor((now - first.timestamp) / stepMs) * stepMs);
  const start = Math.max(first.timestamp, end - (limit - 1) * stepMs);
  const filled: Candle[] = [];
  let previous: Candle | undefined;
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

/** Index candles of an asset, oldest first, gapless up to `now`; an asset without trades has none. */
export async function loadCandles(store: Store, assetId: string, interval: CandleInterval, now: number): Promise<Candle[]> {
  const limit = candleLimits[interval];
  const traded = await store.rows<Candle>(ohlcSql, { table: `candles_${interval}`, asset: assetId, limit, usd_quotes: usdQuotes });
  return forwardFill(traded, intervalMs[interval], now, limit);
}

/** GET /v1/coins/{id}/ohlc (spec 4.4). */
export function ohlcRoute(deps: { store: Store; config: Pick<Config, 'MDS_SIMULATED'> }): CachedRoute {
  const source = deps.config.MDS_SIMULATED ? 'mds:trades (simulated market)' : 'mds:trades';
  return {
    path: '/v1/coins/:id/ohlc',
    refreshSeconds: 60,
    doc: {
      operationId: 'coinOhlc',
      tag: 'Coins',
      summary: 'Index candles of an asset, built from the trade feed',
      path: ohlcPath,
      query: ohlcQuery,
      response: ohlcResponse,
      errors: [400, 404, 503],
    },
    resolve(req) {
      const { interval, vs } = parseParams(ohlcQuery, req.query);
      const id = String(req.params.id);
      if (!findAsset(id)) throw new ApiError(404, 'not_found', `no asset with id ${JSON.stringify(id)}`);
      return {
        key: `${id}|${interval}|${vs}`,
        build: async (): Promise<OhlcResponse> => {
          const now = Date.now();
          const [fx, candles] = await Promise.all([loadRate(deps.store, vs, now), loadCandles(deps.store, id, interval, now)]);
          return {
            candles: candles.map((c) => ({ ...c, open: c.open * fx.rate, high: c.high * fx.rate, low: c.low * fx.rate, close: c.close * fx.rate })),
            // Built from the trades our collectors measured, not from a third party.
            source: vs === 'usd' ? source : `${source}; ${vs} rate: ${fx.source}`,
            rate: fx.rate,
            currency: vs,
          };
        },
      };
    },
  };
}
