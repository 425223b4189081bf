import { readFileSync } from 'node:fs';
import { catalogAssets, supplyAt } from '../../infra/catalog/catalog.ts';
import { usdQuotes } from '../currency/currencies.ts';
import type { Job, JobContext } from '../../infra/jobs.ts';
import type { Store } from '../../infra/store.ts';

/**
 * The daily fear & greed index, from our own measurements only: BTC volatility, momentum and
 * volume, and BTC dominance, each scored by percentile rank over a trailing window.
 * The method, with its sources, is in aggregate/METHODOLOGY.md ("Fear and greed").
 */

const dailyIndexBarsSql = readFileSync(new URL('./dailyIndexBars.sql', import.meta.url), 'utf8');

const dayMs = 86_400_000;
/** Relative weights: alternative.me's 25/25/10 for the components we can measure (social, surveys, trends dropped). */
export const fearGreedWeights = { volatility: 25, momentum: 25, dominance: 10 } as const;
/** Days of metric values a percentile rank compares with (the day itself included). */
export const percentileWindowDays = 90;
/** Days of closes behind volatility, drawdown, the mean close and the mean volume. */
export const metricWindowDays = 30;
/** Dominance change is measured over this many days. */
export const dominanceLookbackDays = 7;
/** Fewest values a metric window or a percentile window needs before it counts. */
export const minSampleDays = 7;
/** A day is read this long after it ended, so the aggregator's last batch of the day is in. */
export const settleMs = 5 * 60_000;

/** alternative.me's bands (research/methodology.md 4.1): upper bound of each, inclusive. */
export const fearGreedBands = [
  { max: 25, label: 'Extreme Fear' },
  { max: 46, label: 'Fear' },
  { max: 54, label: 'Neutral' },
  { max: 75, label: 'Greed' },
  { max: 100, label: 'Extreme Greed' },
] as const;
export type FearGreedLabel = (typeof fearGreedBands)[number]['label'];

export function fearGreedLabel(score: number): FearGreedLabel {
  return (fearGreedBands.find((b) => score <= b.max) ?? fearGreedBands[4]).label;
}

/**
 * Percentile rank of `value` in `sample` (which holds it), 0-100, ties counted half: a value
 * equal to everything ranks 50, so a flat market reads neutral rather than extreme.
 */
export function percentileRank(value: number, sample: readonly number[]): number {
  let below = 0;
  let equal = 0;
  for (const v of sample) {
    if (v < value) below += 1;
    else if (v === value) equal += 1;
  }
  return (100 * (below + equal / 2)) / sample.length;
}

/** One asset's index close and USD volume of one UTC day (day = days since the Unix epoch). */
export interface DailyBar {
  day: number;
  close: number;
  volumeUsd: number;
}

/** What the index measures on a day; a field is absent when its window holds too few days. */
export interface FearGreedMetrics {
  realizedVolatility?: number;
  maxDrawdown?: number;
  trend?: number;
  volumeRatio?: number;
  dominanceChange?: number;
}

export interface FearGreedReading {
  /** Days since the epoch of the UTC day the reading is published for; it measures the days before it. */
  date: number;
  score: number;
  label: FearGreedLabel;
  components: { volatility: number | null; momentum: number | null; dominance: number | null };
  metrics: FearGreedMetrics;
  historyDays: number;
}

const mean = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

function sampleStdev(xs: readonly number[]): number {
  const m = mean(xs);
  return Math.sqrt(xs.reduce((a, x) => a + (x - m) ** 2, 0) / (xs.length - 1));
}

/** BTC's own metrics of `day` from its daily bars (by day). */
function btcMetrics(btc: ReadonlyMap<number, DailyBar>, day: number): FearGreedMetrics {
  const today = btc.get(day);
  const window: DailyBar[] = [];
  for (let d = day - metricWindowDays + 1; d <= day; d++) {
    const bar = btc.get(d);
    if (bar) window.push(bar);
  }
  if (!today || window.length < minSampleDays) return {};

  // Log returns between consecutive calendar days only: a gap in our data is not a one-day move.
  const returns: number[] = [];
  for (const bar of window) {
    const previous = btc.get(bar.day - 1);
    if (previous) returns.push(Math.log(bar.close / previous.close));
  }
  let peak = 0;
  let maxDrawdown = 0;
  for (const bar of window) {
    peak = Math.max(peak, bar.close);
    maxDrawdown = Math.max(maxDrawdown, 1 - bar.close / peak);
  }
  const meanVolume = mean(window.map((b) => b.volumeUsd));
  return {
    ...(returns.length >= 2 ? { realizedVolatility: sampleStdev(returns) } : {}),
    maxDrawdown,
    trend: today.close / mean(window.map((b) => b.close)) - 1,
    ...(meanVolume > 0 ? { volumeRatio: today.volumeUsd / meanVolume } : {}),
  };
}

/**
 * BTC dominance change from `day - 7` to `day`, in percentage points. Both dominances are taken
 * over the same assets (those with a close on both days and a known supply), so an asset that
 * starts or stops trading in between does not show up as a change.
 */
export function dominanceChange(
  closes: ReadonlyMap<string, ReadonlyMap<number, number>>,
  circulating: (assetId: string, day: number) => number,
  day: number,
): number | undefined {
  const before = day - dominanceLookbackDays;
  let totalNow = 0;
  let totalBefore = 0;
  let btcNow: number | undefined;
  let btcBefore: number | undefined;
  for (const [assetId, byDay] of closes) {
    const closeNow = byDay.get(day);
    const closeBefore = byDay.get(before);
    if (closeNow === undefined || closeBefore === undefined) continue;
    const supplyNow = circulating(assetId, day);
    const supplyBefore = circulating(assetId, before);
    if (!(supplyNow > 0 && supplyBefore > 0)) continue;
    totalNow += closeNow * supplyNow;
    totalBefore += closeBefore * supplyBefore;
    if (assetId === 'bitcoin') {
      btcNow = closeNow * supplyNow;
      btcBefore = closeBefore * supplyBefore;
    }
  }
  if (btcNow === undefined || btcBefore === undefined) return undefined;
  return (100 * btcNow) / totalNow - (100 * btcBefore) / totalBefore;
}

type MetricName = keyof FearGreedMetrics;

/**
 * Readings for the given data days (each published for the next day), from daily bars of
 * every asset (`bars` by asset id, each by day). Pure: the job and the tests feed it.
 * A data day without a BTC close, or whose components all lack history, gives no reading.
 */
export function fearGreedReadings(
  bars: ReadonlyMap<string, ReadonlyMap<number, DailyBar>>,
  circulating: (assetId: string, day: number) => number,
  dataDays: readonly number[],
): FearGreedReading[] {
  const btc = bars.get('bitcoin') ?? new Map<number, DailyBar>();
  const closes = new Map([...bars].map(([asset, byDay]) => [asset, new Map([...byDay].map(([d, b]) => [d, b.close]))]));
  const metricsCache = new Map<number, FearGreedMetrics>();
  const metricsOf = (day: number): FearGreedMetrics => {
    let m = metricsCache.get(day);
    if (!m) {
      m = btcMetrics(btc, day);
      const dom = btc.has(day) ? dominanceChange(closes, circulating, day) : undefined;
      if (dom !== undefined) m.dominanceChange = dom;
      metricsCache.set(day, m);
    }
    return m;
  };
  /** Percentile of the day's value of a metric among the trailing window's values; undefined when either is missing. */
  const pct = (day: number, name: MetricName): number | undefined => {
    const value = metricsOf(day)[name];
    if (value === undefined) return undefined;
    const sample: number[] = [];
    for (let d = day - percentileWindowDays + 1; d <= day; d++) {
      const v = metricsOf(d)[name];
      if (v !== undefined) sample.push(v);
    }
    return sample.length >= minSampleDays ? percentileRank(value, sample) : undefined;
  };
  const meanOfDefined = (xs: (number | undefined)[]): number | null => {
    const defined = xs.filter((x): x is number => x !== undefined);
    return defined.length ? mean(defined) : null;
  };

  const readings: FearGreedReading[] = [];
  for (const day of dataDays) {
    if (!btc.has(day)) continue;
    const metrics = metricsOf(day);
    const vol = pct(day, 'realizedVolatility');
    const drawdown = pct(day, 'maxDrawdown');
    const trend = pct(day, 'trend');
    const volume = pct(day, 'volumeRatio');
    const dom = pct(day, 'dominanceChange');
    const components = {
      volatility: meanOfDefined([vol === undefined ? undefined : 100 - vol, drawdown === undefined ? undefined : 100 - drawdown]),
      // High volume is greed in an up-move and fear in a down-move.
      momentum: meanOfDefined([trend, volume === undefined ? undefined : (metrics.trend ?? 0) > 0 ? volume : 100 - volume]),
      // Money running to BTC (dominance rising) is fear.
      dominance: dom === undefined ? null : 100 - dom,
    };
    let weighted = 0;
    let weights = 0;
    for (const name of ['volatility', 'momentum', 'dominance'] as const) {
      const c = components[name];
      if (c === null) continue;
      weighted += fearGreedWeights[name] * c;
      weights += fearGreedWeights[name];
    }
    if (weights === 0) continue;
    const score = Math.round(weighted / weights);
    let historyDays = 0;
    for (let d = day - percentileWindowDays - metricWindowDays + 1; d <= day; d++) if (btc.has(d)) historyDays += 1;
    readings.push({ date: day + 1, score, label: fearGreedLabel(score), components, metrics, historyDays });
  }
  return readings;
}

/** YYYY-MM-DD of a day number. */
export function isoDay(day: number): string {
  return new Date(day * dayMs).toISOString().slice(0, 10);
}

async function loadDailyBars(store: Store, assetIds: readonly string[], fromDay: number): Promise<Map<string, Map<number, DailyBar>>> {
  const rows = await store.rows<{ asset: string; t: number; close: number; volumeUsd: number }>(dailyIndexBarsSql, {
    assets: assetIds,
    usd_quotes: usdQuotes,
    from_s: Math.max(0, fromDay) * 86_400,
  });
  const bars = new Map<string, Map<number, DailyBar>>();
  for (const r of rows) {
    const day = Math.floor(r.t / 86_400);
    let byDay = bars.get(r.asset);
    if (!byDay) bars.set(r.asset, (byDay = new Map()));
    byDay.set(day, { day, close: r.close, volumeUsd: r.volumeUsd });
  }
  return bars;
}

/** Circulating supply at the end of a day, from the catalog (schedule-based where the asset has one). */
function catalogCirculating(): (assetId: string, day: number) => number {
  const byId = new Map(catalogAssets.map((a) => [a.id, a]));
  return (assetId, day) => {
    const asset = byId.get(assetId);
    return asset ? supplyAt(asset, (day + 1) * dayMs - 1).circulating : 0;
  };
}

/**
 * Computes and stores the reading of every complete day that has none yet (all of stored
 * history on the first run: the backfill). Returns the readings written.
 */
export async function updateFearGreed(store: Store, now: number, signal?: AbortSignal): Promise<FearGreedReading[]> {
  const btcDays = [...((await loadDailyBars(store, ['bitcoin'], 0)).get('bitcoin')?.keys() ?? [])];
  if (btcDays.length === 0) return [];
  // No reading is possible before a metric window, then a percentile window, holds minSampleDays
  // values: skipping those days keeps them from being retried (and history reloaded) forever.
  const earliest = Math.min(...btcDays) + 2 * (minSampleDays - 1);
  // A data day is complete once it has ended and settled; its reading is dated the day after.
  const complete = btcDays.filter((d) => d >= earliest && (d + 1) * dayMs + settleMs <= now);
  if (complete.length === 0) return [];
  const stored = new Set(
    (await store.rows<{ date: string }>('SELECT DISTINCT toString(date) AS date FROM fear_greed_daily')).map((r) => r.date),
  );
  const missing = complete.filter((d) => !stored.has(isoDay(d + 1)));
  if (missing.length === 0 || signal?.aborted) return [];

  // Percentile windows reach back 90 days, and each of those days' metrics 30 (dominance 7) more.
  const fromDay = Math.min(...missing) - percentileWindowDays - metricWindowDays;
  const bars = await loadDailyBars(store, catalogAssets.map((a) => a.id), fromDay);
  const readings = fearGreedReadings(bars, catalogCirculating(), missing);
  if (signal?.aborted) return [];
  await store.insert(
    'fear_greed_daily',
    readings.map((r) => ({
      date: isoDay(r.date),
      score: r.score,
      label: r.label,
      volatility_score: r.components.volatility,
      momentum_score: r.components.momentum,
      dominance_score: r.components.dominance,
      realized_volatility: r.metrics.realizedVolatility ?? null,
      max_drawdown: r.metrics.maxDrawdown ?? null,
      trend: r.metrics.trend ?? null,
      volume_ratio: r.metrics.volumeRatio ?? null,
      dominance_change: r.metrics.dominanceChange ?? null,
      history_days: r.historyDays,
      computed_at: now,
    })),
  );
  return readings;
}

/** Daily fear & greed index (aggregate/METHODOLOGY.md, "Fear and greed"). Cheap when nothing is missing. */
export const fearGreedJob: Job = {
  name: 'fear-greed',
  everyMs: 10 * 60_000,
  async run({ store, log, signal }: JobContext) {
    const written = await updateFearGreed(store, Date.now(), signal);
    if (written.length > 0) {
      const last = written[written.length - 1]!;
      log.info({ days: written.length, latest: isoDay(last.date), score: last.score }, 'fear & greed readings written');
    }
  },
};
