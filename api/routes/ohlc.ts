import type { Config } from '../../infra/config.ts';
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { findAsset } from '../../infra/catalog/catalog.ts';
import type { Store } from '../../infra/store.ts';
import { ApiError, parseParams } from '../errors.ts';
import { vsParam } from '../currency.ts';
import type { CachedRoute } from '../responseCache.ts';

const ohlcSql = readFileSync(new URL('./ohlc.sql', import.meta.url), 'utf8');

/** Candle intervals (spec 4.4) and how many of the most recent buckets one response holds. */
export const candleLimits = { '1m': 1440, '5m': 864, '15m': 672, '1h': 720, '4h': 540, '1d': 365, '1w': 260 } as const;
export type CandleInterval = keyof typeof candleLimits;
const intervals = Object.keys(candleLimits) as CandleInterval[];


/** Candle (spec 2.3). */
const candle = z.object({
  timestamp: z.number().int().describe('unix ms of the interval start'),
  open: z.number(),
  high: z.number(),
  low: z.number(),
  close: z.number(),
  volume: z.number().describe('base asset units traded in the interval'),
});
export type Candle = z.infer<typeof candle>;

export const ohlcResponse = z.object({
  candles: z.array(candle).describe('oldest first; intervals without trades are absent'),
  source: z.string().describe('where the candles come from: our measured trades'),
  rate: z.number().describe('FX rate applied (1 for usd)'),
  currency: z.string().describe('quote currency served'),
});
export type OhlcResponse = z.infer<typeof ohlcResponse>;

const ohlcPath = z.object({ id: z.string().describe('asset id, e.g. bitcoin') });

const ohlcQuery = z.object({
  interval: z.enum(intervals, { error: `must be one of ${intervals.join(', ')}` }).default('1h'),
  vs: vsParam,
});

/** Index candles of an asset, oldest first; an asset without trades has none. */
export async function loadCandles(store: Store, assetId: string, interval: CandleInterval): Promise<Candle[]> {
  return store.rows<Candle>(ohlcSql, { table: `candles_${interval}`, asset: assetId, limit: candleLimits[interval] });
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
      errors: [400, 404],
    },
    resolve(req) {
      const { interval, vs } = parseParams(ohlcQuery, req.query);
      const id = String(req.params.id);
      if (!findAsset(id)) throw new ApiError(404, 'not_found', `no asset with id ${JSON.stringify(id)}`);
      return {
        key: `${id}|${interval}|${vs}`,
        build: async (): Promise<OhlcResponse> => ({
          candles: await loadCandles(deps.store, id, interval),
          // Built from the trades our collectors measured, not from a third party.
          source,
          rate: 1,
          currency: vs,
        }),
      };
    },
  };
}
