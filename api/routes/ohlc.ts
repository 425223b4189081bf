import type { Config } from '../../infra/config.ts';
import { z } from 'zod';
import type { StoreCalls } from '../../infra/store.ts';
import { ApiError, parseParams } from '../errors.ts';
import { loadRate, rateRuns, rateRunsSchema, vsParam } from '../currency.ts';
import { loadBucketRates } from '../read/bucketRates.ts';
import { candleIntervals, candleLimits, fillGrid, intervalMs, loadCandles, type CandleInterval } from '../read/candleSeries.ts';
import { bucketStart } from '../read/indexCloses.ts';
import { latestIndexBucketBefore, loadIndexCandles, type IndexCandle } from '../read/indexCandles.ts';
import { gapSpansSchema, unrecoveredGaps } from '../read/tradeGaps.ts';
import type { CachedRoute } from '../responseCache.ts';
import { checkRange, timeParam } from '../timeRange.ts';
import { namedAsset, servedAsset } from '../read/servedAsset.ts';

const dayMs = 86_400_000;

/** Longest from-to range one request may ask, in days, per interval: at most about 10,000 candles. */
export const maxRangeDays: Record<CandleInterval, number> = { '1m': 7, '5m': 31, '15m': 93, '1h': 366, '4h': 1_464, '1d': 3_660, '1w': 18_300 };

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
    .describe(
      'oldest first, gapless: an interval without trades repeats the previous close as open, high, low and close, with volume 0. ' +
        'Without from and to: the most recent candles (up to 1440 1m, 864 5m, 672 15m, 720 1h, 540 4h, 365 1d, 260 1w) up to the interval that holds now. ' +
        'With them: every interval starting in [from, to) from the first candle we hold, up to the interval that holds now',
    ),
  source: z.string().describe('where the candles come from: our measured trades; for another currency than usd, also where its current rate comes from (measured, reference with its date, or index)'),
  rate: z.number().describe('units of the served currency per 1 USD now (1 for usd); each candle is converted at the rate of its own time, listed in rates'),
  rates: rateRunsSchema,
  currency: z.string().describe('quote currency served'),
  coverage: z
    .enum(['full', 'partial'])
    .describe("partial when the candles' span holds a gap of the asset's markets' trades we could not recover (gaps); nothing from third parties fills it"),
  gaps: gapSpansSchema,
});
export type OhlcResponse = z.infer<typeof ohlcResponse>;

const ohlcPath = z.object({ id: z.string().describe('asset id, e.g. bitcoin') });

const ohlcQuery = z.object({
  interval: z.enum(candleIntervals, { error: `must be one of ${candleIntervals.join(', ')}` }).default('1h'),
  vs: vsParam,
  from: timeParam(
    'start of the range (unix ms, or ISO 8601 such as 2026-01-01 or 2026-01-01T00:00:00Z): candles whose interval starts at or after it. ' +
      `Default without from and to: the most recent candles; with to alone: the default count before to. Longest range per interval, in days: ${Object.entries(maxRangeDays).map(([i, d]) => `${i} ${d}`).join(', ')}`,
  ),
  to: timeParam('end of the range, excluded (unix ms or ISO 8601); default now'),
});

/**
 * Index candles of an asset whose intervals start in [from, to), oldest first, gapless from the
 * first candle we hold up to the interval that holds `now`.
 */
export async function loadCandleRange(store: StoreCalls, assetId: string, interval: CandleInterval, from: number, to: number, now: number): Promise<IndexCandle[]> {
  const table = `candles_${interval}` as const;
  const stepMs = intervalMs[interval];
  // The latest candle before the range carries its close into the range's first intervals; finding it reads bucket keys only.
  const before = await latestIndexBucketBefore(store, table, assetId, from);
  // Every candle from it on: at most one per bucket starting in [from, to), and itself.
  const limit = 1 + Math.ceil((to - from) / stepMs);
  const traded = (await loadIndexCandles(store, { table, assets: [assetId], from: before, to, limit })).get(assetId) ?? [];
  const first = traded[0];
  const last = traded.at(-1);
  if (!first || !last) return [];
  const firstInRange = bucketStart(table, from) === from ? from : bucketStart(table, from) + stepMs;
  const end = Math.min(bucketStart(table, to - 1), Math.max(bucketStart(table, now), last.timestamp));
  return fillGrid(traded, stepMs, Math.max(first.timestamp, firstInRange), end);
}

/** The [from, to) a request asks for, when it gives either; checked against the interval's longest range. */
function requestedRange(interval: CandleInterval, from: number | undefined, to: number | undefined, now: number): { from: number; to: number } | undefined {
  if (from === undefined && to === undefined) return undefined;
  const range = { from: from ?? Math.max(0, to! - candleLimits[interval] * intervalMs[interval]), to: to ?? now };
  checkRange(range.from, range.to, maxRangeDays[interval] * dayMs, `for interval=${interval}`);
  return range;
}

/** GET /v1/coins/{id}/ohlc (spec 4.4). */
export function ohlcRoute(deps: { store: StoreCalls; config: Pick<Config, 'MDS_SIMULATED'> }): CachedRoute {
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
      const { interval, vs, from, to } = parseParams(ohlcQuery, req.query);
      const requested = String(req.params.id);
      namedAsset(requested);
      const range = requestedRange(interval, from, to, Date.now());
      return {
        // `to` absent means now: the entry then lives one refresh interval, as the default series.
        key: `${requested}|${interval}|${vs}|${from ?? ''}|${to ?? ''}`,
        build: async (): Promise<OhlcResponse> => {
          // An alias (a discovered asset joined into another) answers for the asset it joined.
          const { id } = await servedAsset(deps.store, requested);
          const now = Date.now();
          // The rates of a range load beside its candles; the default series' bounds are known once its candles are.
          const [fx, candles, rangeRates] = await Promise.all([
            loadRate(deps.store, vs, now),
            range ? loadCandleRange(deps.store, id, interval, range.from, range.to, now) : loadCandles(deps.store, id, interval, now),
            range && vs !== 'usd' ? loadBucketRates(deps.store, vs, `candles_${interval}`, range.from, Math.min(range.to, now)) : undefined,
          ]);
          const spanEnd = candles.length > 0 ? candles.at(-1)!.timestamp + intervalMs[interval] : now;
          const gaps = candles.length > 0 || range ? await unrecoveredGaps(deps.store, id, range?.from ?? candles[0]!.timestamp, range ? Math.min(range.to, spanEnd) : spanEnd) : [];
          // Built from the trades our collectors measured, not from a third party.
          const response: OhlcResponse = { candles, source: vs === 'usd' ? source : `${source}; ${vs} rate: ${fx.source}`, rate: fx.rate, currency: vs, coverage: gaps.length === 0 ? 'full' : 'partial', gaps };
          if (vs === 'usd') return response;
          if (candles.length === 0) return { ...response, rates: [] };
          const rateAt = rangeRates ?? (await loadBucketRates(deps.store, vs, `candles_${interval}`, candles[0]!.timestamp, candles.at(-1)!.timestamp));
          const converted = candles.flatMap((c) => {
            const fxThen = rateAt(c.timestamp);
            return fxThen ? [{ candle: { ...c, open: c.open * fxThen.rate, high: c.high * fxThen.rate, low: c.low * fxThen.rate, close: c.close * fxThen.rate }, t: c.timestamp, ...fxThen }] : [];
          });
          return { ...response, candles: converted.map((c) => c.candle), rates: rateRuns(converted) };
        },
      };
    },
  };
}
