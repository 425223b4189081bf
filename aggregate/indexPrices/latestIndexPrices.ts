import { readFileSync } from 'node:fs';
import { configSchema, type Config } from '../../infra/config.ts';
import { minFreeBytes } from '../../infra/diskSpace.ts';
import type { StoreCalls } from '../../infra/store.ts';
import { summaryBucketSeconds } from './indexSummary.ts';

/**
 * The one read of "the current index price of an asset": every route and job that serves or
 * applies the latest price, its 24 h reference or `measured` reads it here.
 */

const latestSql = readFileSync(new URL('./latestIndexPrices.sql', import.meta.url), 'utf8');

/** A USD price and when it was measured (unix ms: the second, or the bucket start, it comes from). */
export interface PricePoint {
  price: number;
  at: number;
}

export interface LatestIndexPrice {
  /** USD index price of the latest second computed in the 48 h up to now. */
  price: number;
  /** unix ms of that second. */
  second: number;
  /** unix ms of the last trade behind price. */
  updatedAt: number;
  /** The `measured` rule (MeasuredRule): from trades, fresh, and the store able to store more. */
  measured: boolean;
  /** The index price at or before now - 1 h and now - 24 h: the latest second at or before it in the 48 h read, or the oldest second read when our history there is shorter. */
  reference: { '1h': PricePoint; '24h': PricePoint };
  /** USD volume of the index constituents over the seconds of the last 24 h. */
  volume24hUsd: number;
}

interface Row {
  asset: string;
  second: number;
  price: number;
  updatedAtMs: number;
  carried: number | boolean;
  ref1h: [number, number];
  ref24h: [number, number];
  volume24hUsd: number;
  storeFreeBytes: number;
}

/** Percent change from `then` to `now`: the one definition every change figure (change24h, 1h, 7d...) uses. */
export function percentChange(now: number, then: number): number {
  return (now / then - 1) * 100;
}

/**
 * When a price is `measured`: it comes from trades (not carried by the fail-closed rule), its last
 * trade is at most `staleAfterMs` (INDEX_STALE_AFTER_MS) old, and the store's disk has at least
 * `minFreeBytes` (STORE_MIN_FREE_MB) free: below that, trades stop being stored (inserts fail, a
 * merge cannot be written), so a price that still looks fresh is no longer being kept up.
 */
export interface MeasuredRule {
  staleAfterMs: number;
  minFreeBytes: number;
}

export type MeasuredConfig = Pick<Config, 'INDEX_STALE_AFTER_MS' | 'STORE_MIN_FREE_MB'>;

/** The rule as configured: the one place it is built from the settings. */
export function measuredRule(config: MeasuredConfig): MeasuredRule {
  return { staleAfterMs: config.INDEX_STALE_AFTER_MS, minFreeBytes: minFreeBytes(config) };
}

const defaultMeasuredRule = measuredRule(configSchema.pick({ INDEX_STALE_AFTER_MS: true, STORE_MIN_FREE_MB: true }).parse({}));
const day = 86_400;
/** How far back the latest price reads (and, through it, each start of the index runner writes the summaries again). */
export const latestPriceLookbackSeconds = 2 * day;
const fromSeconds = ([price, s]: [number, number]): PricePoint => ({ price, at: s * 1000 });

/** The query parameters of latestIndexPrices.sql for `assets` at `now` (unix ms). */
export function latestIndexPriceParams(assets: readonly string[], now: number): Record<string, unknown> {
  const nowS = Math.floor(now / 1000);
  return {
    assets,
    now_s: nowS,
    from_s: nowS - latestPriceLookbackSeconds,
    bucket_s: summaryBucketSeconds,
    day_from_s: nowS - day,
    ref_1h_s: nowS - 3600,
    ref_24h_s: nowS - day,
  };
}

/**
 * The latest index price at `now` of each of `assets` that has one: an index row in the 48 h up
 * to now (an asset's index stops a day after its markets' last trade). Only those 48 h are read:
 * their 10-minute summaries, and the rows of the buckets the summaries cannot stand for
 * (latestIndexPrices.sql).
 */
export async function latestIndexPrices(
  store: StoreCalls,
  assets: readonly string[],
  now: number,
  rule: MeasuredRule = defaultMeasuredRule,
): Promise<Map<string, LatestIndexPrice>> {
  if (assets.length === 0) return new Map();
  const rows = await store.rows<Row>(latestSql, latestIndexPriceParams(assets, now));
  return new Map(
    rows.map((r) => [
      r.asset,
      {
        price: r.price,
        second: r.second * 1000,
        updatedAt: r.updatedAtMs,
        measured: !r.carried && now - r.updatedAtMs <= rule.staleAfterMs && r.storeFreeBytes >= rule.minFreeBytes,
        reference: { '1h': fromSeconds(r.ref1h), '24h': fromSeconds(r.ref24h) },
        volume24hUsd: r.volume24hUsd,
      },
    ]),
  );
}
