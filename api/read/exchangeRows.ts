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

const exchangesSql = readFileSync(new URL('./exchanges.sql', import.meta.url), 'utf8');
const scoreMarketsSql = readFileSync(new URL('./exchangeScoreMarkets.sql', import.meta.url), 'utf8');
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

/** What we measured of every venue for its exchange score (aggregate/exchangeScore.ts), read at `now`, by venue id. */
async function loadScoreMeasurements(store: StoreCalls, now: number, quoteRates: UsdQuoteRates) {
  // Uptime counts complete minutes only: the current one may still get its first trade.
  const toS = Math.floor(now / minuteMs) * 60;
  const fromS = toS - dayMs / 1000;
  const freshMs = now - qualityFreshMs;
  const [markets, uptime, exclusions] = await Promise.all([
    store.rows<{ venue: string; market: string; volume24h: number; liquidityScore: number | null }>(scoreMarketsSql, {
      from_s: Math.floor((now - dayMs) / 1000),
      fresh_ms: freshMs,
      ...usdQuoteParams(quoteRates),
    }),
    store.rows<{ venue: string; tradedMinutes: number; firstMinute: number }>(uptimeSql, { from_s: fromS, to_s: toS }),
    store.rows<{ venue: string; judgedMarkets: number; flaggedMarkets: number }>(exclusionsSql, {
      fresh_ms: freshMs,
      unjudged: unjudgedExclusions,
      flagged: dataQualityExclusions,
    }),
  ]);
  // The window starts where our history does, when that is later: the minutes before it would
  // otherwise count as an outage of every venue.
  const historyStartS = uptime.length > 0 ? Math.max(fromS, Math.min(...uptime.map((u) => u.firstMinute))) : toS;
  const marketsByVenue = new Map<string, ExchangeScoreInputs['markets'][number][]>();
  for (const m of markets) marketsByVenue.set(m.venue, [...(marketsByVenue.get(m.venue) ?? []), { volume24hUsd: m.volume24h, liquidityScore: m.liquidityScore }]);
  const tradedMinutes = new Map(uptime.map((u) => [u.venue, u.tradedMinutes]));
  const verdicts = new Map(exclusions.map((e) => [e.venue, { judgedMarkets: e.judgedMarkets, flaggedMarkets: e.flaggedMarkets }]));
  return (venue: string): Omit<ExchangeScoreInputs, 'contract' | 'channels' | 'liquidationsSampled' | 'volume24hUsd'> => ({
    markets: marketsByVenue.get(venue) ?? [],
    windowMinutes: (toS - historyStartS) / 60,
    tradedMinutes: tradedMinutes.get(venue) ?? 0,
    ...(verdicts.get(venue) ?? { judgedMarkets: 0, flaggedMarkets: 0 }),
  });
}

/** The row's score fields from a computed score (all null when there is none). */
function scoreFields(s: ExchangeScore | null): Pick<ExchangeRow, 'score' | 'scoreBreakdown' | 'scoreInputs'> {
  return s ? { score: s.score, scoreBreakdown: s.breakdown, scoreInputs: s.inputs } : { score: null, scoreBreakdown: null, scoreInputs: null };
}

/** A venue's last 24 h: markets that traded, trades and USD volume. */
export interface VenueDay {
  markets: number;
  trades24h: number;
  volume24h: number;
}

/** The list row of `venue` from its last 24 h (none: it did not trade) and its score measurements. */
function rowOf(v: CatalogVenue, day: VenueDay | undefined, measuredOf: Awaited<ReturnType<typeof loadScoreMeasurements>>): ExchangeRow {
  const volume24h = day?.volume24h ?? 0;
  const score = exchangeScore({ contract: v.contract, channels: v.channels, liquidationsSampled: v.liquidationsSampled, volume24hUsd: volume24h, ...measuredOf(v.id) });
  return { id: v.id, name: v.name, url: v.url, contract: v.contract, marketCount: day?.markets ?? 0, trades24h: day?.trades24h ?? 0, volume24h, ...scoreFields(score) };
}

/** Every venue of the catalog with its last 24 h and its exchange score, largest volume first (ties by id). */
export async function loadExchangeRows(store: StoreCalls, now: number): Promise<ExchangeRow[]> {
  const quoteRates = await loadUsdQuoteRates(store, now);
  const [rows, measuredOf] = await Promise.all([
    store.rows<VenueDay & { venue: string }>(exchangesSql, {
      from_s: Math.floor((now - dayMs) / 1000),
      ...usdQuoteParams(quoteRates),
    }),
    loadScoreMeasurements(store, now, quoteRates),
  ]);
  const byVenue = new Map(rows.map((r) => [r.venue, r]));
  return catalogVenues.map((v) => rowOf(v, byVenue.get(v.id), measuredOf)).sort((a, b) => b.volume24h - a.volume24h || (a.id < b.id ? -1 : 1));
}

/**
 * One venue's list row, its totals given by the caller: the exchange page sums them from the very
 * market rows it serves, so that the row and its markets are one read and agree.
 */
export async function loadExchangeRow(store: StoreCalls, now: number, venue: CatalogVenue, day: VenueDay, quoteRates: UsdQuoteRates): Promise<ExchangeRow> {
  return rowOf(venue, day, await loadScoreMeasurements(store, now, quoteRates));
}

