import { z } from 'zod';

/**
 * The index price of one asset in one second, as a pure function of what each candidate market
 * looked like at the end of that second (aggregate/METHODOLOGY.md, "Index price"; the precedent of
 * every parameter is named there and in ../shared/research/methodology.md §1.8). The sweep
 * (indexSweep.ts) calls this once per asset and second on the inputs indexInputs.ts loads.
 */

/** Why a candidate market is left out, in the order the rules are applied (the first one wins). */
export const exclusionReasons = ['perpetual', 'no_usd_rate', 'disconnected', 'stale', 'crossed_book', 'low_share', 'outlier'] as const;
export type ExclusionReason = (typeof exclusionReasons)[number];

export const indexStatuses = ['ok', 'single_venue', 'fail_closed'] as const;
export type IndexStatus = (typeof indexStatuses)[number];

export const indexParamsSchema = z.object({
  /** Outlier: |price / median - 1| above this fraction. Coin Metrics 3 % (VWAP filter); CF Benchmarks PED 5-10 %. */
  outlierThreshold: z.number().positive().max(1).default(0.03),
  /** An outlier is re-admitted once its deviation is below this fraction of the threshold (CF Benchmarks: 50 %). */
  outlierReadmitFraction: z.number().positive().max(1).default(0.5),
  /** low_share: below this fraction of the asset's trailing volume over its candidate markets (Coin Metrics CEX rule: 1 %). */
  minShare: z.number().min(0).max(1).default(0.01),
  /** stale never before the last trade is this old (ms); Coin Metrics inactivity rule: 1 min. */
  staleMinMs: z.number().int().positive().default(60_000),
  /** stale always once the last trade is this old (ms); Coin Metrics: 10 min. */
  staleMaxMs: z.number().int().positive().default(600_000),
  /** In between, stale once the last trade is older than this many mean inter-trade intervals; Coin Metrics: 100. */
  staleIntervals: z.number().positive().default(100),
  /** Fewest healthy venues behind a price when the asset has at least that many eligible venues; fewer = fail closed. */
  minHealthyVenues: z.number().int().min(1).default(2),
  /** A book counts as crossed only when measured within this many ms of the second. */
  crossedBookMaxAgeMs: z.number().int().positive().default(60_000),
  /** Perpetual markets in the index (Coin Metrics: spot only). */
  includePerpetuals: z.boolean().default(false),
  /** Trailing window of the volume weights and shares, in whole minutes before the second's minute. */
  volumeWindowMinutes: z.number().int().positive().default(1_440),
  /** Trailing window of the mean inter-trade interval, whole minutes (Coin Metrics: 60). */
  intervalWindowMinutes: z.number().int().positive().default(60),
});
export type IndexParams = z.infer<typeof indexParamsSchema>;
export const defaultIndexParams: IndexParams = indexParamsSchema.parse({});

/** One candidate market of the asset at the end of the second. */
export interface MarketInput {
  venue: string;
  market: string;
  quote: string;
  contract: 'spot' | 'perpetual';
  /** USD per unit of the quote currency at that second; undefined when no rate is known. */
  usdPerQuote: number | undefined;
  /** Price of the market's last trade up to the end of the second, quote currency. */
  lastPrice: number;
  /** Time of that trade (unix ms); null when it is older than the stale look-back (then the market is stale whatever its rate). */
  lastTradeAt: number | null;
  /** Quote-currency value traded in the volume window up to the end of the second. */
  windowNotional: number;
  /** Mean time between trades over the interval window (ms); Infinity when it had none. */
  meanIntervalMs: number;
  /** The latest book measured within crossedBookMaxAgeMs of the second was crossed (bid above ask). */
  crossed: boolean;
  /** The collector's latest status of the market up to the end of the second says its socket is down. */
  disconnected: boolean;
  /** What traded on the market in this second. */
  inSecond: { notional: number; volume: number; trades: number };
}

/** The previous second of the asset as published: carried on fail-closed, and the outlier memory. */
export interface PreviousIndex {
  price: number;
  lastTradeAt: number;
  /** venue:market of the markets excluded as outliers in that second. */
  outliers: ReadonlySet<string>;
}

export interface MarketVerdict {
  venue: string;
  market: string;
  quote: string;
  priceUsd: number | null;
  volume24hUsd: number;
  /** Share of the index price; 0 when excluded. */
  weight: number;
  reason: ExclusionReason | null;
}

export interface IndexSecond {
  /** undefined when nothing can be published: fail-closed with no earlier price to carry. */
  price: number | undefined;
  status: IndexStatus;
  markets: MarketVerdict[];
  /** Traded in the second on the constituents: base units, USD, trades. */
  volume: number;
  volumeUsd: number;
  tradeCount: number;
  /** Latest trade behind the price (carried with a carried price). */
  lastTradeAt: number | undefined;
}

export const marketKey = (m: { venue: string; market: string }) => `${m.venue}:${m.market}`;

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/**
 * Coin Metrics' inactivity rule as an age: a market is stale once its last trade is older than
 * this, i.e. older than the floor, and older than the ceiling or than N mean intervals.
 */
export function staleAfterMs(meanIntervalMs: number, params: IndexParams): number {
  return Math.max(params.staleMinMs, Math.min(params.staleMaxMs, params.staleIntervals * meanIntervalMs));
}

/** Mean time between trades over the interval window, from the trades in it (Infinity when none). */
export function meanTradeIntervalMs(intervalTrades: number, params: IndexParams): number {
  return intervalTrades > 0 ? (params.intervalWindowMinutes * 60_000) / intervalTrades : Infinity;
}

/** How far back a market's last trade matters: any older one is stale whatever its trade rate. */
export function staleLookbackMs(params: IndexParams): number {
  return Math.max(params.staleMinMs, params.staleMaxMs);
}

/**
 * The index price of `second` (unix s; trades up to its end count). Rules in order, first reason
 * wins: perpetual (unless configured), no_usd_rate, disconnected, stale, crossed_book, low_share (share of the
 * window volume over the candidates with a USD rate), outlier (against the median of the markets
 * still in, with hysteresis from `previous`). Venues with a market past the structural rules
 * (contract, rate, share) are eligible; those with a market past every rule are healthy. Price =
 * window-volume-weighted mean of the included markets' USD prices, unless the asset has several
 * eligible venues and fewer healthy ones than required: then fail closed, the previous price carried.
 */
export function computeIndexSecond(
  second: number,
  markets: readonly MarketInput[],
  previous: PreviousIndex | undefined,
  params: IndexParams,
): IndexSecond {
  const end = (second + 1) * 1000;
  const verdicts = markets.map((m) => ({
    input: m,
    priceUsd: m.usdPerQuote === undefined ? null : m.lastPrice * m.usdPerQuote,
    volume24hUsd: m.usdPerQuote === undefined ? 0 : m.windowNotional * m.usdPerQuote,
    reason: null as ExclusionReason | null,
  }));

  for (const v of verdicts) {
    const m = v.input;
    if (m.contract === 'perpetual' && !params.includePerpetuals) v.reason = 'perpetual';
    else if (v.priceUsd === null) v.reason = 'no_usd_rate';
  }
  const rated = verdicts.filter((v) => v.reason === null);
  const totalVolume = rated.reduce((sum, v) => sum + v.volume24hUsd, 0);
  for (const v of rated) {
    const m = v.input;
    if (m.disconnected) v.reason = 'disconnected';
    else if (m.lastTradeAt === null || end - m.lastTradeAt > staleAfterMs(m.meanIntervalMs, params)) v.reason = 'stale';
    else if (m.crossed) v.reason = 'crossed_book';
    else if (totalVolume > 0 && v.volume24hUsd / totalVolume < params.minShare) v.reason = 'low_share';
  }
  // Eligible: past the structural rules, whether healthy this second or not.
  const eligibleVenues = new Set(rated.filter((v) => v.reason !== 'low_share').map((v) => v.input.venue));

  const priced = rated.filter((v) => v.reason === null);
  if (priced.length > 0) {
    const mid = median(priced.map((v) => v.priceUsd!));
    for (const v of priced) {
      const deviation = Math.abs(v.priceUsd! / mid - 1);
      const wasOutlier = previous?.outliers.has(marketKey(v.input)) ?? false;
      const limit = wasOutlier ? params.outlierThreshold * params.outlierReadmitFraction : params.outlierThreshold;
      if (wasOutlier ? deviation >= limit : deviation > limit) v.reason = 'outlier';
    }
  }

  const included = priced.filter((v) => v.reason === null);
  const healthyVenues = new Set(included.map((v) => v.input.venue));
  const weightSum = included.reduce((sum, v) => sum + v.volume24hUsd, 0);
  const enoughVenues =
    eligibleVenues.size <= 1 ? healthyVenues.size === 1 : healthyVenues.size >= Math.min(params.minHealthyVenues, eligibleVenues.size);
  const failClosed = !enoughVenues || !(weightSum > 0);

  const result: IndexSecond = {
    price: previous?.price,
    status: 'fail_closed',
    markets: [],
    volume: 0,
    volumeUsd: 0,
    tradeCount: 0,
    lastTradeAt: previous?.lastTradeAt,
  };
  if (!failClosed) {
    let weighted = 0;
    let lastTradeAt = -Infinity;
    for (const v of included) {
      const m = v.input;
      weighted += v.volume24hUsd * v.priceUsd!;
      lastTradeAt = Math.max(lastTradeAt, m.lastTradeAt!);
      result.volume += m.inSecond.volume;
      result.volumeUsd += m.inSecond.notional * m.usdPerQuote!;
      result.tradeCount += m.inSecond.trades;
    }
    result.price = weighted / weightSum;
    result.status = eligibleVenues.size <= 1 ? 'single_venue' : 'ok';
    result.lastTradeAt = lastTradeAt;
  }
  result.markets = verdicts.map((v) => ({
    venue: v.input.venue,
    market: v.input.market,
    quote: v.input.quote,
    priceUsd: v.priceUsd,
    volume24hUsd: v.volume24hUsd,
    weight: failClosed || v.reason !== null ? 0 : v.volume24hUsd / weightSum,
    reason: v.reason,
  }));
  return result;
}
