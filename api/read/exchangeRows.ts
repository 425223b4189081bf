import { readFileSync } from 'node:fs';
import { z } from 'zod';
import {
  dataQualityExclusions,
  defaultExchangeScoreParams,
  exchangeScore,
  unjudgedExclusions,
  type ExchangeScore,
  type ExchangeScoreInputs,
} from '../../aggregate/exchangeScore.ts';
import { catalogVenues, type CatalogVenue } from '../../infra/catalog/catalog.ts';
import { loadUsdQuoteRates, usdQuoteParams, type UsdQuoteRates } from '../../aggregate/currency/usdRates.ts';
import type { StoreCalls } from '../../infra/store.ts';
import { qualityFreshMs } from './bookFreshness.ts';

const marketsSql = readFileSync(new URL('./exchangeMarkets.sql', import.meta.url), 'utf8');
const uptimeSql = readFileSync(new URL('./exchangeUptime.sql', import.meta.url), 'utf8');
const exclusionsSql = readFileSync(new URL('./exchangeExclusions.sql', import.meta.url), 'utf8');
/** One day, ms: the window of the list's 24 h figures. */
export const dayMs = 86_400_000;
const minuteMs = 60_000;

const { points } = defaultExchangeScoreParams;
const share = (description: string) => z.number().min(0).max(1).nullable().describe(description);

/** Row of the exchange list (our contract: the spec leaves it open). */
export const exchangeRow = z.object({
  id: z.string(),
  name: z.string(),
  url: z.string(),
  contract: z.enum(['spot', 'perpetual']).describe('what its markets trade'),
  marketCount: z.number().int().describe('markets that traded in the last 24 h'),
  trades24h: z.number().int(),
  volume24h: z.number().describe('USD volume of the last 24 h, markets quoted in USD or a USD stablecoin (at its measured rate, as the index)'),
  score: z
    .number()
    .min(0)
    .max(10)
    .nullable()
    .describe('exchange score, 0-10, the sum of scoreBreakdown (aggregate/METHODOLOGY.md, "Market quality and exchange score"); null when the venue traded in no complete minute of the last 24 h: nothing of it is measured'),
  scoreBreakdown: z
    .object({
      liquidity: z.number().min(0).max(points.liquidity).describe(`0-${points.liquidity}: scoreInputs.liquidityScore / 1000 of the points`),
      dataQuality: z
        .number()
        .min(0)
        .max(points.dataQuality)
        .describe(`0-${points.dataQuality}: uptime (weight 1/2), bookFreshness (1/4) and 1 - flaggedShare (1/4); a null part drops out and the others share its weight`),
      scale: z.number().min(0).max(points.scale).describe(`0-${points.scale}: log10 of volume24h, from $1M (0) to $10B (all points)`),
      apiCoverage: z.number().min(0).max(points.apiCoverage).describe(`0-${points.apiCoverage}: scoreInputs.channelCoverage of the points`),
    })
    .nullable()
    .describe('points of each pillar; null with score'),
  scoreInputs: z
    .object({
      liquidityScore: z
        .number()
        .min(0)
        .max(1000)
        .nullable()
        .describe('mean liquidity score (0-1000) of its USD-valued markets of the last 24 h with a book measured in the last minute, weighted by their 24 h volume; null when none has one'),
      uptime: z.number().min(0).max(1).describe('share of the complete minutes of the last 24 h (or since our history starts, when shorter) in which the venue traded'),
      bookFreshness: share('share of its USD-valued markets of the last 24 h with a book measured in the last minute; null when we collect no books of the venue or it has no such market'),
      flaggedShare: share('share of its markets the index judged in the last minute that it excluded as stale, disconnected, crossed_book or outlier; null when none was judged'),
      channelCoverage: z
        .number()
        .min(0)
        .max(1)
        .describe('channels we collect, of trades, books and (perpetual venues) liquidations; a liquidation feed that publishes a sample counts half'),
    })
    .nullable()
    .describe('the measurements behind scoreBreakdown; null with score'),
});
export type ExchangeRow = z.infer<typeof exchangeRow>;

/** A market of a venue over the 24 h up to the read (exchangeMarkets.sql). */
export interface VenueMarket {
  venue: string;
  market: string;
  asset: string;
  quote: string;
  /** Last trade price, in the quote. */
  price: number;
  trades24h: number;
  /** USD, each quote at its measured rate. */
  volume24h: number;
  /** Quote volume since the start of the current UTC day, stablecoins at par (the daily history's rule). */
  volumeToday: number;
  /** Of its latest book, when measured in the last minute; null otherwise. */
  liquidityScore: number | null;
}

/**
 * The one read of the venues' markets at `now`: those quoted in a USD quote that traded in the last
 * 24 h, of `venue` or ('') of every venue, largest USD volume first. Every figure of an exchange
 * row that counts its markets (marketCount, trades24h, volume24h, the score's liquidity and book
 * freshness) is summed from these rows, so that a response's numbers come from one snapshot.
 */
export function loadVenueMarkets(store: StoreCalls, now: number, quoteRates: UsdQuoteRates, venue = ''): Promise<VenueMarket[]> {
  return store.rows<VenueMarket>(marketsSql, {
    venue,
    from_s: Math.floor((now - dayMs) / 1000),
    today_s: Math.floor(now / dayMs) * (dayMs / 1000),
    fresh_ms: now - qualityFreshMs,
    ...usdQuoteParams(quoteRates),
  });
}

/** What we measured of every venue for its exchange score besides its markets, read at `now`, by venue id. */
async function loadScoreMeasurements(store: StoreCalls, now: number) {
  // Uptime counts complete minutes only: the current one may still get its first trade.
  const toS = Math.floor(now / minuteMs) * 60;
  const fromS = toS - dayMs / 1000;
  const [uptime, exclusions] = await Promise.all([
    store.rows<{ venue: string; tradedMinutes: number; firstMinute: number }>(uptimeSql, { from_s: fromS, to_s: toS }),
    store.rows<{ venue: string; judgedMarkets: number; flaggedMarkets: number }>(exclusionsSql, {
      fresh_ms: now - qualityFreshMs,
      unjudged: unjudgedExclusions,
      flagged: dataQualityExclusions,
    }),
  ]);
  // The window starts where our history does, when that is later: the minutes before it would
  // otherwise count as an outage of every venue.
  const historyStartS = uptime.length > 0 ? Math.max(fromS, Math.min(...uptime.map((u) => u.firstMinute))) : toS;
  const tradedMinutes = new Map(uptime.map((u) => [u.venue, u.tradedMinutes]));
  const verdicts = new Map(exclusions.map((e) => [e.venue, { judgedMarkets: e.judgedMarkets, flaggedMarkets: e.flaggedMarkets }]));
  return (venue: string): Pick<ExchangeScoreInputs, 'windowMinutes' | 'tradedMinutes' | 'judgedMarkets' | 'flaggedMarkets'> => ({
    windowMinutes: (toS - historyStartS) / 60,
    tradedMinutes: tradedMinutes.get(venue) ?? 0,
    ...(verdicts.get(venue) ?? { judgedMarkets: 0, flaggedMarkets: 0 }),
  });
}

/** The row's score fields from a computed score (all null when there is none). */
function scoreFields(s: ExchangeScore | null): Pick<ExchangeRow, 'score' | 'scoreBreakdown' | 'scoreInputs'> {
  return s ? { score: s.score, scoreBreakdown: s.breakdown, scoreInputs: s.inputs } : { score: null, scoreBreakdown: null, scoreInputs: null };
}

const sumOf = (markets: readonly VenueMarket[], value: (m: VenueMarket) => number) => markets.reduce((sum, m) => sum + value(m), 0);

/** The list row of `venue` from its markets of the last 24 h (none: it did not trade) and its other score measurements. */
function rowOf(v: CatalogVenue, markets: readonly VenueMarket[], measuredOf: Awaited<ReturnType<typeof loadScoreMeasurements>>): ExchangeRow {
  const volume24h = sumOf(markets, (m) => m.volume24h);
  const score = exchangeScore({
    contract: v.contract,
    channels: v.channels,
    liquidationsSampled: v.liquidationsSampled,
    volume24hUsd: volume24h,
    markets: markets.map((m) => ({ volume24hUsd: m.volume24h, liquidityScore: m.liquidityScore })),
    ...measuredOf(v.id),
  });
  return { id: v.id, name: v.name, url: v.url, contract: v.contract, marketCount: markets.length, trades24h: sumOf(markets, (m) => m.trades24h), volume24h, ...scoreFields(score) };
}

/** Every venue of the catalog with its last 24 h and its exchange score, largest volume first (ties by id). */
export async function loadExchangeRows(store: StoreCalls, now: number): Promise<ExchangeRow[]> {
  const quoteRates = await loadUsdQuoteRates(store, now);
  const [markets, measuredOf] = await Promise.all([loadVenueMarkets(store, now, quoteRates), loadScoreMeasurements(store, now)]);
  const byVenue = Map.groupBy(markets, (m) => m.venue);
  return catalogVenues.map((v) => rowOf(v, byVenue.get(v.id) ?? [], measuredOf)).sort((a, b) => b.volume24h - a.volume24h || (a.id < b.id ? -1 : 1));
}

/**
 * One venue's list row from `markets`, its markets read by loadVenueMarkets: the exchange page
 * passes the very rows it serves, so that the row and its markets are one read and agree.
 */
export async function loadExchangeRow(store: StoreCalls, now: number, venue: CatalogVenue, markets: readonly VenueMarket[]): Promise<ExchangeRow> {
  return rowOf(venue, markets, await loadScoreMeasurements(store, now));
}
