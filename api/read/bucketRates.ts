import { readFileSync } from 'node:fs';
import type { Currency } from '../../aggregate/currency/currencies.ts';
import { defaultFxMeasurement, weightedMedian } from '../../aggregate/currency/fxMeasured.ts';
import type { StoreCalls } from '../../infra/store.ts';
import { loadIndexCloses, type CandleTable } from './indexCloses.ts';

const crossesSql = readFileSync(new URL('./bucketCrosses.sql', import.meta.url), 'utf8');
const referenceSql = readFileSync(new URL('./fxReferenceDays.sql', import.meta.url), 'utf8');

/** The rate applied to one bucket: units of the served currency per 1 USD, and where it comes from. */
export interface BucketRate {
  rate: number;
  source: string;
}

/** The rate of the bucket starting at a time; undefined when none is known for that time. */
export type RateAt = (bucketStart: number) => BucketRate | undefined;

/** The crypto currencies served, by the catalog id whose index converts them (as usdRates.ts). */
const indexAssets: Partial<Record<Currency, string>> = { btc: 'bitcoin', eth: 'ethereum' };

/** The last element whose key is at or before `key` in a list sorted by key. */
function latestAtOrBefore<T, K>(sorted: readonly T[], keyOf: (item: T) => K, key: K): T | undefined {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (keyOf(sorted[mid]!) <= key) lo = mid + 1;
    else hi = mid;
  }
  return sorted[lo - 1];
}

const utcDay = (t: number) => new Date(t).toISOString().slice(0, 10);

/**
 * The rate of `vs` of its own time, for each bucket of `table` starting in [fromMs, toMs]
 * (aggregate/METHODOLOGY.md, "FX and currencies", applied per bucket instead of at now):
 * - a fiat currency: measured within the bucket when, on some venue, a bridge asset traded against
 *   both it and USD in that bucket (per venue and asset: VWAP in the currency / VWAP in USD,
 *   weighted by the thinner leg's USD value; the weighted median of them), else the reference rate
 *   of the bucket's UTC day (the latest published on or before it), else none;
 * - btc, eth: 1 / the index close of bitcoin (ethereum) in that bucket, or in the latest earlier
 *   bucket of the range with one.
 */
export async function loadBucketRates(store: StoreCalls, vs: Currency, table: CandleTable, fromMs: number, toMs: number): Promise<RateAt> {
  if (vs === 'usd') return () => ({ rate: 1, source: 'usd' });
  const indexAsset = indexAssets[vs];
  if (indexAsset) {
    const closes = (await loadIndexCloses(store, table, [indexAsset], fromMs, toMs)).get(indexAsset) ?? [];
    return (t) => {
      const latest = latestAtOrBefore(closes, (c) => c.t, t);
      return latest && latest.close > 0 ? { rate: 1 / latest.close, source: `index:${indexAsset} close ${new Date(latest.t).toISOString().replace('.000Z', 'Z')}` } : undefined;
    };
  }

  const currency = vs.toUpperCase();
  const [crosses, reference] = await Promise.all([
    store.rows<{ t: number; venue: string; fiatQuoteVolume: number; fiatVolume: number; usdQuoteVolume: number; usdVolume: number }>(crossesSql, {
      table,
      currency,
      quotes: ['USD', currency],
      assets: defaultFxMeasurement.bridgeAssets,
      from_s: Math.max(0, Math.floor(fromMs / 1000)),
      to_s: Math.floor(toMs / 1000),
    }),
    store.rows<{ day: string; perUsd: number; source: string }>(referenceSql, { currency: vs, from_day: utcDay(fromMs), to_day: utcDay(toMs) }),
  ]);

  const observations = new Map<number, { value: number; weight: number; venue: string }[]>();
  for (const c of crosses) {
    const value = c.fiatQuoteVolume / c.fiatVolume / (c.usdQuoteVolume / c.usdVolume);
    const list = observations.get(c.t) ?? [];
    list.push({ value, weight: Math.min(c.usdQuoteVolume, c.fiatQuoteVolume / value), venue: c.venue });
    observations.set(c.t, list);
  }
  const measured = new Map<number, BucketRate>();
  for (const [t, points] of observations) {
    const rate = weightedMedian(points);
    const venues = [...new Set(points.map((p) => p.venue))].sort().join(',');
    if (rate !== undefined) measured.set(t, { rate, source: `measured:${venues} ${currency}/USD cross in the bucket` });
  }
  return (t) => {
    const own = measured.get(t);
    if (own) return own;
    const day = latestAtOrBefore(reference, (r) => r.day, utcDay(t));
    return day ? { rate: day.perUsd, source: `reference:${day.source} ${day.day}` } : undefined;
  };
}
