import { z } from 'zod';
import { supplyAt } from '../../infra/catalog/catalog.ts';
import type { Config } from '../../infra/config.ts';
import type { StoreCalls } from '../../infra/store.ts';
import { measuredRule } from '../../aggregate/indexPrices/latestIndexPrices.ts';
import { loadRate, rateRuns, rateRunsSchema, vsParam } from '../currency.ts';
import { ApiError, parseParams } from '../errors.ts';
import { sharedAssetMarkets } from '../read/assetMarket.ts';
import { loadBucketRates } from '../read/bucketRates.ts';
import { bucketStart, candleBucketMs, loadIndexCloses, type CandleTable } from '../read/indexCloses.ts';
import { gapSpansSchema, unrecoveredGaps } from '../read/tradeGaps.ts';
import type { CachedRoute } from '../responseCache.ts';
import { checkRange, timeParam } from '../timeRange.ts';
import { namedAsset, servedAsset } from '../read/servedAsset.ts';

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
/** A from-to range draws the finest of these whose buckets over the range number at most maxRangePoints. */
const rangeTables = ['candles_1m', 'candles_5m', 'candles_1h', 'candles_4h', 'candles_1d', 'candles_1w'] as const satisfies readonly CandleTable[];
const maxRangePoints = 1_000;
/** Longest from-to range: 1,000 weekly points. */
const maxRangeMs = maxRangePoints * candleBucketMs.candles_1w;

/** The candles that draw [from, to): the finest table that keeps the points under maxRangePoints, from the bucket that holds `from`. */
function rangeDrawing(from: number, to: number): { table: CandleTable; from: number } {
  const table = rangeTables.find((t) => (to - from) / candleBucketMs[t] <= maxRangePoints) ?? 'candles_1w';
  return { table, from: bucketStart(table, from) };
}

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
  vs: vsParam.describe('quote currency; each point is converted at the rate of its own time (listed in rates)'),
  from: timeParam(
    'start of a range instead of `range`, default 24 h before to (unix ms, or ISO 8601 such as 2026-01-01 or 2026-01-01T00:00:00Z): points of the buckets that hold an instant of [from, to), ' +
      `drawn from the finest of 1 min, 5 min, 1 h, 4 h, 1 day, 1 week buckets that keeps them at most ${maxRangePoints}; the longest range is ${maxRangeMs / 86_400_000} days`,
  ),
  to: timeParam('end of the range, excluded (unix ms or ISO 8601); default now'),
});

const chartResponse = z.object({
  id: z.string().describe('asset id served'),
  range: z.enum([...ranges, 'custom']).describe('window served; custom for a from-to range'),
  from: z.number().int().optional().describe('with range custom: the from served (unix ms)'),
  to: z.number().int().optional().describe('with range custom: the to served (unix ms)'),
  metric: z.enum(['price', 'market_cap']).describe('metric served'),
  currency: z.string().describe('currency served; USD values converted at the rate of each point\'s time (rates)'),
  coverage: z
    .enum(['full', 'partial'])
    .describe(
      'partial when our own first measured trade of the asset is after the window start (or we have none), or when the window holds a gap of its markets\' trades we could not recover (gaps); nothing from third parties pads the window',
    ),
  gaps: gapSpansSchema,
  points: z
    .array(z.tuple([z.number().int().describe('unix ms: start of the bucket'), z.number().describe('value at the bucket close')]))
    .describe(
      'oldest first, one per bucket with trades (buckets without a trade are absent): 1 min buckets for 1h, 5 min for 24h, 1 h for 7d, ' +
        `4 h for 30d and 90d, 1 day for 1y, and for max 1 day while our history spans at most ${maxDailyPoints} days, else 1 week. ` +
        'price: close of the index candle (last trade on the index markets); market_cap: that close x the circulating supply at the bucket start',
    ),
  rates: rateRunsSchema,
});
export type ChartResponse = z.infer<typeof chartResponse>;

/** GET /v1/coins/{id}/chart (spec 4.5). */
export function chartRoute(deps: { store: StoreCalls; config: Pick<Config, 'INDEX_STALE_AFTER_MS' | 'STORE_MIN_FREE_MB'> }): CachedRoute {
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
      const { range, metric, vs, from, to } = parseParams(chartQuery, req.query);
      const requested = String(req.params.id);
      namedAsset(requested);
      const custom = from !== undefined || to !== undefined;
      if (custom && req.query.range !== undefined) throw new ApiError(400, 'bad_request', 'invalid parameter range: give range or from/to, not both');
      // With to alone, the default range's window (24h) before it.
      const asked = custom ? { from: from ?? Math.max(0, to! - chartRanges['24h'].windowMs), to: to ?? Date.now() } : undefined;
      if (asked) checkRange(asked.from, asked.to, maxRangeMs, 'of a chart');
      return {
        key: `${requested}|${custom ? `${from ?? ''}-${to ?? ''}` : range}|${metric}|${vs}`,
        build: async (): Promise<ChartResponse> => {
          // An alias (a discovered asset joined into another) answers for the asset it joined.
          const asset = await servedAsset(deps.store, requested);
          const { id } = asset;
          const { at: now, markets } = await sharedAssetMarkets(deps.store, measuredRule(deps.config));
          const observedSince = markets.find((m) => m.asset.id === id)?.observedSince ?? null;
          // The current rate: its 503 when vs has none, as every converting endpoint.
          await loadRate(deps.store, vs, now);
          const { table, from: firstBucket, windowStart } = asked ? { ...rangeDrawing(asked.from, asked.to), windowStart: asked.from } : drawing(range, now, observedSince);
          const closes = (await loadIndexCloses(deps.store, table, [id], firstBucket, asked ? Math.min(asked.to - 1, now) : now)).get(id) ?? [];
          const rateAt = closes.length > 0 ? await loadBucketRates(deps.store, vs, table, closes[0]!.t, closes.at(-1)!.t) : () => undefined;
          const gaps = await unrecoveredGaps(deps.store, id, windowStart ?? 0, asked ? Math.min(asked.to, now) : now);
          const converted = closes.flatMap(({ t, close }) => {
            const fx = rateAt(t);
            return fx ? [{ t, ...fx, point: [t, (metric === 'price' ? close : close * supplyAt(asset, t).circulating) * fx.rate] as [number, number] }] : [];
          });
          return {
            id,
            range: asked ? 'custom' : range,
            ...(asked && { from: asked.from, to: asked.to }),
            metric,
            currency: vs,
            coverage: observedSince !== null && (windowStart === null || observedSince <= windowStart) && gaps.length === 0 ? 'full' : 'partial',
            gaps,
            points: converted.map((c) => c.point),
            ...(vs !== 'usd' && { rates: rateRuns(converted) }),
          };
        },
      };
    },
  };
}
