import { readFileSync } from 'node:fs';
import { usdQuotes } from '../../aggregate/currency/currencies.ts';
import type { StoreCalls } from '../../infra/store.ts';

/**
 * The hourly and daily windows of the asset market (7 d / 14 d / 30 d / 1 y references and ranges)
 * before its live buckets, read once per hour. With 31 days of hourly candles and 395 of daily
 * ones, reading them took 1.5-3.4 s for the universe demo's 7,800 markets (test/bench/RESULTS.md,
 * bench:window-fill); what changes within an hour is the live buckets, which assetMarket.sql reads
 * each time: the current hour and the one before it, today and yesterday. Every bound here is a
 * bucket start derived from the hour of `now`: a reference is the latest bucket starting at or
 * before now - w, a range the buckets starting after now - w, the same for every second of the
 * hour. What a trade older than the live buckets changes (a late repair of a gap) shows at the
 * next hour.
 */

const longWindowsSql = readFileSync(new URL('./assetLongWindows.sql', import.meta.url), 'utf8');

const hourS = 3600;
const dayS = 86_400;

/** A tuple (value, unix seconds) as the store returns it: a bucket's volume-weighted price and its start. */
export type BucketPoint = [number, number];

/** A row of assetLongWindows.sql; the fields of a part are null when the asset has no bucket in it. */
export interface LongWindowRow {
  asset: string;
  hasRef7d: number | null;
  ref7d: BucketPoint | null;
  hasRef14d: number | null;
  ref14d: BucketPoint | null;
  hasRef30d: number | null;
  ref30d: BucketPoint | null;
  oldestHour: BucketPoint | null;
  high7d: number | null;
  low7d: number | null;
  high30d: number | null;
  low30d: number | null;
  hasRef1y: number | null;
  ref1y: BucketPoint | null;
  oldestDay: BucketPoint | null;
  high1y: number | null;
  low1y: number | null;
}

/** Where the live buckets start at `now` (unix ms): the hour before the current one, and yesterday. Unix seconds. */
export function liveBucketsFrom(now: number): { hour: number; day: number } {
  const nowS = Math.floor(now / 1000);
  return { hour: Math.floor(nowS / hourS) * hourS - hourS, day: Math.floor(nowS / dayS) * dayS - dayS };
}

/** The parameters of assetLongWindows.sql at `now`: the same for every `now` of one hour. */
export function longWindowParams(assets: readonly string[], now: number): Record<string, unknown> {
  const live = liveBucketsFrom(now);
  const hourStart = live.hour + hourS;
  const dayStart = live.day + dayS;
  return {
    assets,
    usd_quotes: usdQuotes,
    live_hour_from_s: live.hour,
    live_day_from_s: live.day,
    // The buckets starting after now - 31 d and now - 395 d.
    hour_from_s: hourStart - 31 * dayS + hourS,
    year_from_s: dayStart - 395 * dayS + dayS,
    ref_7d_s: hourStart - 7 * dayS,
    ref_14d_s: hourStart - 14 * dayS,
    ref_30d_s: hourStart - 30 * dayS,
    ref_1y_s: dayStart - 365 * dayS,
  };
}

/**
 * Assets per query. The embedded store runs one query at a time: read for the universe demo's
 * 4,500 assets in one query, the long windows held it for 1.6-3.4 s, and the index runner's reads
 * waited behind them; in parts of this many, for a few hundred ms each.
 */
export const longWindowAssetsPerQuery = 500;

/** The long windows of `assets` at `now`, read now, in queries of at most longWindowAssetsPerQuery assets. */
export async function loadLongWindows(store: StoreCalls, assets: readonly string[], now: number): Promise<Map<string, LongWindowRow>> {
  const out = new Map<string, LongWindowRow>();
  for (let i = 0; i < assets.length; i += longWindowAssetsPerQuery) {
    const part = assets.slice(i, i + longWindowAssetsPerQuery);
    for (const row of await store.rows<LongWindowRow>(longWindowsSql, longWindowParams(part, now))) out.set(row.asset, row);
  }
  return out;
}

/**
 * The long windows read once per hour of `now`: an hour's first call reads them for its assets, a
 * later call of the hour only for assets not read yet (a listing discovered since). One per store.
 */
export class LongWindowCache {
  #hourFrom = Number.NaN;
  #rows = new Map<string, LongWindowRow>();
  #read = new Set<string>();

  async rowsOf(store: StoreCalls, assets: readonly string[], now: number): Promise<Map<string, LongWindowRow>> {
    const hourFrom = liveBucketsFrom(now).hour;
    if (hourFrom !== this.#hourFrom) {
      this.#hourFrom = hourFrom;
      this.#rows = new Map();
      this.#read = new Set();
    }
    const rows = this.#rows;
    const read = this.#read;
    const missing = assets.filter((a) => !read.has(a));
    if (missing.length > 0) {
      const fresh = await loadLongWindows(store, missing, now);
      // A newer hour may have begun while this read ran: its cache is not this one.
      for (const [asset, row] of fresh) rows.set(asset, row);
      for (const asset of missing) read.add(asset);
    }
    return rows;
  }
}
