import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { fearGreedBands, fearGreedWeights, isoDay } from '../../aggregate/jobs/fearGreed.ts';
import type { Config } from '../../infra/config.ts';
import type { StoreCalls } from '../../infra/store.ts';
import { parseParams } from '../errors.ts';
import type { CachedRoute } from '../responseCache.ts';

const fearGreedSql = readFileSync(new URL('./fearGreed.sql', import.meta.url), 'utf8');

const dayMs = 86_400_000;
/** Days of daily scores in `series`. */
export const seriesDays = 365;
/** `lastMonth` is this many days before `current`; `high` and `low` cover this many days ending at `current`. */
export const referenceDays = 30;

const totalWeight = fearGreedWeights.volatility + fearGreedWeights.momentum + fearGreedWeights.dominance;
const weightOf = (name: keyof typeof fearGreedWeights) =>
  z.number().describe(`share of the score when every component is scored: ${fearGreedWeights[name]}/${totalWeight}; components without enough history are left out and the others' weights scaled up`);
const componentScore = z.number().nullable().describe('0-100 (100 = greed); null while our history is too short for it');

const reading = z.object({
  date: z.string().describe('UTC day (YYYY-MM-DD) the reading is published for, at 00:00; it measures the complete days before it'),
  score: z.number().int().min(0).max(100).describe('0 = extreme fear, 100 = extreme greed'),
  label: z.enum(fearGreedBands.map((b) => b.label)).describe(`alternative.me bands: ${fearGreedBands.map((b, i) => `${i === 0 ? 0 : fearGreedBands[i - 1]!.max + 1}-${b.max} ${b.label}`).join(', ')}`),
  components: z.object({
    volatility: z.object({
      score: componentScore.describe('100 - percentile rank (90 days) of BTC 30-day volatility and of its 30-day max drawdown, averaged: unusual swings read as fear'),
      weight: weightOf('volatility'),
      realizedVolatility: z.number().nullable().describe('standard deviation of BTC daily log returns over 30 days (not annualised)'),
      maxDrawdown: z.number().nullable().describe('largest fall of BTC daily closes from a running peak within 30 days, 0-1'),
    }),
    momentum: z.object({
      score: componentScore.describe('percentile rank of the trend, averaged with that of the volume ratio (inverted when the trend is not up)'),
      weight: weightOf('momentum'),
      trend: z.number().nullable().describe('BTC close / mean close of 30 days - 1'),
      volumeRatio: z.number().nullable().describe('BTC USD volume of the day / its 30-day mean'),
    }),
    dominance: z.object({
      score: componentScore.describe('100 - percentile rank of the 7-day change in BTC dominance: a flight to BTC reads as fear'),
      weight: weightOf('dominance'),
      dominanceChange: z.number().nullable().describe('BTC share of the total market cap, change over 7 days in percentage points'),
    }),
  }),
  historyDays: z.number().int().describe('days of BTC history the reading drew on, at most 120 (30-day metrics ranked over 90 days): fewer means a young, less reliable reading'),
});
export type FearGreedReadingBody = z.infer<typeof reading>;

export const fearGreedResponse = z.object({
  current: reading.nullable().describe('the latest reading (today\'s once the day\'s job has run); null before our history allows one'),
  series: z.array(z.object({ date: z.string(), score: z.number().int() })).describe(`one score per day, up to ${seriesDays} days ending at current, oldest first; days without a reading are absent`),
  lastMonth: reading.nullable().describe(`the reading ${referenceDays} days before current (or the latest one before that); null when none`),
  high: reading.nullable().describe(`highest score of the ${referenceDays} days ending at current (the latest on a tie)`),
  low: reading.nullable().describe(`lowest score of the ${referenceDays} days ending at current (the latest on a tie)`),
  source: z.string().describe('what the index is computed from'),
});
export type FearGreedResponse = z.infer<typeof fearGreedResponse>;

interface Row {
  date: string;
  score: number;
  label: FearGreedReadingBody['label'];
  volatilityScore: number | null;
  momentumScore: number | null;
  dominanceScore: number | null;
  realizedVolatility: number | null;
  maxDrawdown: number | null;
  trend: number | null;
  volumeRatio: number | null;
  dominanceChange: number | null;
  historyDays: number;
}

function toReading(r: Row): FearGreedReadingBody {
  const weight = (name: keyof typeof fearGreedWeights) => fearGreedWeights[name] / totalWeight;
  return {
    date: r.date,
    score: r.score,
    label: r.label,
    components: {
      volatility: { score: r.volatilityScore, weight: weight('volatility'), realizedVolatility: r.realizedVolatility, maxDrawdown: r.maxDrawdown },
      momentum: { score: r.momentumScore, weight: weight('momentum'), trend: r.trend, volumeRatio: r.volumeRatio },
      dominance: { score: r.dominanceScore, weight: weight('dominance'), dominanceChange: r.dominanceChange },
    },
    historyDays: r.historyDays,
  };
}

/** The stored readings shaped for the response (spec 2.9, fear and greed history). */
export async function loadFearGreed(store: StoreCalls, now: number, source: string): Promise<FearGreedResponse> {
  const today = Math.floor(now / dayMs);
  const rows = (await store.rows<Row>(fearGreedSql, { from_date: isoDay(today - seriesDays - referenceDays) })).filter(
    (r) => r.date <= isoDay(today),
  );
  const last = rows[rows.length - 1];
  if (!last) return { current: null, series: [], lastMonth: null, high: null, low: null, source };
  const currentDay = Date.parse(last.date) / dayMs;
  const monthAgo = isoDay(currentDay - referenceDays);
  const windowStart = isoDay(currentDay - referenceDays + 1);
  const recent = rows.filter((r) => r.date >= windowStart);
  // Rows are oldest first: `>=` keeps the latest of equal scores.
  const high = recent.reduce((best, r) => (r.score >= best.score ? r : best));
  const low = recent.reduce((best, r) => (r.score <= best.score ? r : best));
  const lastMonth = rows.filter((r) => r.date <= monthAgo).at(-1);
  const seriesStart = isoDay(currentDay - seriesDays + 1);
  return {
    current: toReading(last),
    series: rows.filter((r) => r.date >= seriesStart).map((r) => ({ date: r.date, score: r.score })),
    lastMonth: lastMonth ? toReading(lastMonth) : null,
    high: toReading(high),
    low: toReading(low),
    source,
  };
}

/** GET /v1/fear-greed/history (spec 4.15). */
export function fearGreedRoute(deps: { store: StoreCalls; config: Pick<Config, 'MDS_SIMULATED'> }): CachedRoute {
  const source = `mds:index prices (BTC volatility, momentum and volume; BTC dominance over the catalog)${deps.config.MDS_SIMULATED ? ' (simulated market)' : ''}`;
  const query = z.object({});
  return {
    path: '/v1/fear-greed/history',
    // The index changes once a day; a short interval makes a new day's reading visible soon after the job writes it.
    refreshSeconds: 300,
    doc: {
      operationId: 'fearGreedHistory',
      tag: 'Indicators',
      summary: 'Daily fear & greed index from our own measurements, with its components',
      query,
      response: fearGreedResponse,
      errors: [],
    },
    resolve(req) {
      parseParams(query, req.query);
      return { key: '*', build: () => loadFearGreed(deps.store, Date.now(), source) };
    },
  };
}
