import { z } from 'zod';
import { findAsset, supplyAt } from '../../infra/catalog/catalog.ts';
import type { Config } from '../../infra/config.ts';
import type { Store } from '../../infra/store.ts';
import { loadRate, vsParam } from '../currency.ts';
import { ApiError, parseParams } from '../errors.ts';
import { sharedAssetMarkets } from '../read/assetMarket.ts';
import { loadIndexCloses, type CandleTable } from '../read/indexCloses.ts';
import type { CachedRoute } from '../responseCache.ts';

const minuteMs = 60_000;
const hourMs = 60 * minuteMs;
const dayMs = 24 * hourMs;

/** Each window and the candles that draw it: at most ~540 points, so a chart stays light. */
const chartRanges = {
  '1h': { windowMs: hourMs, table: 'candles_1m', bucketMs: minuteMs },
  '24h': { windowMs: dayMs, table: 'candles_5m', bucketMs: 5 * minuteMs },
  '7d': { windowMs: 7 * dayMs, table: 'candles_1h', bucketMs: hourMs },
  '30d': { windowMs: 30 * dayMs, table: 'candles_4h', bucketMs: 4 * hourMs },
  '90d': { windowMs: 90 * dayMs, table: 'candles_4h', bucketMs: 4 * hourMs },
  '1y': { windowMs: 365 * dayMs, table: 'candles_1d', bucketMs: dayMs },
} as const satisfies Record<string, { windowMs: number; table: CandleTable; bucketMs: number }>;
const ranges = [...(Object.keys(chartRanges) as (keyof typeof chartRanges)[]), 'max'] as const;
export type ChartRange = (typeof ranges)[number];
/** `max` draws daily points while our history is at most this long, weekly points beyond. */
const maxDailyPoints = 1_000;

/** The candles that draw `range` up to `now`, from the bucket that holds the window start; max has no window start. */
function drawing(range: ChartRange, now: number, observedSince: number | null): { table: CandleTable; from: number; windowStart: number | null } {
  if (range === 'max') {
    const long = observedSince !== null && now - observedSince > maxDailyPoints * dayMs;
    return { table: long ? 'candles_1w' : 'candles_1d', from: 0, windowStart: null };
  }
  const { windowMs, table, bucketMs } = chartRanges[range];
  const windowStart = now - windowMs;
  return { table, from: Math.floor(windowStart / bucketMs) * bucketMs, windowStart };
}

const chartPath = z.object({ id: z.string().describe('asset id, e.g. bitcoin') });
const chartQuery = z.object({
  range: z.enum(ranges, { error: `must be one of ${ranges.join(', ')}` }).default('24h').describe('the window drawn, up to now; max = all our history'),
  metric: z.enum(['price', 'market_cap'], { error: 'must be one of price, market_cap' }).default('price').describe('price, or market cap (price x circulating supply at each point)'),
  vs: vsParam.describe('quote currency; the whole series is converted at the current rate (one rate for every point)'),
});

const chartResponse = z.object({
  id: z.string().describe('asset id served'),
  range: z.enum(ranges).describe('window served'),
  metric: z.enum(['price', 'market_cap']).describe('metric served'),
  currency: z.string().describe('currency served; USD values converted at the current rate (the rate applies to the whole series)'),
  coverage: z
    .enum(['full', 'partial'])
    .describe('partial when our own first measured trade of the asset is after the window start (or we have none); nothing from third parties pads the window'),
  points: z
    .array(z.tuple([z.number().int().describe('unix ms: start of the bucket'), z.number().describe('value at the bucket close')]))
    .describe(
      'oldest first, one per bucket with trades (buckets without a trade are absent): 1 min buckets for 1h, 5 min for 24h, 1 h for 7d, ' +
        `4 h for 30d and 90d, 1 day for 1y, and for max 1 day while our history spans at most ${maxDailyPoints} days, else 1 week. ` +
        'price: close of the index candle (last trade on the index markets); market_cap: that close x the circulating supply at the bucket start',
    ),
});
export type ChartResponse = z.infer<typeof chartResponse>;

/** GET /v1/coins/{id}/chart (spec 4.5). */
export function chartRoute(deps: { store: Store; config: Pick<Config, 'INDEX_STALE_AFTER_MS'> }): CachedRoute {
  return {
    path: '/v1/coins/:id/chart',
    refreshSeconds: 60,
    doc: {
      operationId: 'coinChart',
      tag: 'Coins',
      summary: 'Price or market cap series of an asset over a window, from our own measurements',
      path: chartPath,
      query: chartQuery,
      response: chartResponse,
      errors: [400, 404, 503],
    },
    resolve(req) {
      const { range, metric, vs } = parseParams(chartQuery, req.query);
      const id = String(req.params.id);
      const asset = findAsset(id);
      if (!asset) throw new ApiError(404, 'not_found', `no asset with id ${JSON.stringify(id)}`);
      return {
        key: `${id}|${range}|${metric}|${vs}`,
        build: async (): Promise<ChartResponse> => {
          const { at: now, markets } = await sharedAssetMarkets(deps.store, deps.config.INDEX_STALE_AFTER_MS);
          const observedSince = markets.find((m) => m.asset.id === id)?.observedSince ?? null;
          const { rate } = await loadRate(deps.store, vs, now);
          const { table, from, windowStart } = drawing(range, now, observedSince);
          const closes = (await loadIndexCloses(deps.store, table, [id], from, now)).get(id) ?? [];
          const points = closes.map(({ t, close }): [number, number] => [
            t,
            (metric === 'price' ? close : close * supplyAt(asset, t).circulating) * rate,
          ]);
          return {
            id,
            range,
            metric,
            currency: vs,
            coverage: observedSince !== null && (windowStart === null || observedSince <= windowStart) ? 'full' : 'partial',
            points,
          };
        },
      };
    },
  };
}
