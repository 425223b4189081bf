import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { findAsset, findVenue } from '../../infra/catalog/catalog.ts';
import type { MarketQuality } from '../../aggregate/marketQuality.ts';
import { usdQuotes, type UsdQuote } from '../../aggregate/currency/currencies.ts';
import { loadUsdQuoteRates } from '../../aggregate/currency/usdRates.ts';
import type { StoreCalls } from '../../infra/store.ts';
import { loadRate, vsParam } from '../currency.ts';
import { ApiError, parseParams } from '../errors.ts';
import { qualityFreshMs } from '../read/bookFreshness.ts';
import type { CachedRoute } from '../responseCache.ts';
import { namedAsset, servedAsset } from '../read/servedAsset.ts';

const marketsSql = readFileSync(new URL('./markets.sql', import.meta.url), 'utf8');
const qualitySql = readFileSync(new URL('./marketQuality.sql', import.meta.url), 'utf8');
const verdictsSql = readFileSync(new URL('./marketVerdicts.sql', import.meta.url), 'utf8');
const dayMs = 86_400_000;

const nullableNumber = (description: string) => z.number().nullable().describe(`${description}; null while no fresh book of the market is measured`);
const costs = (side: string) =>
  z
    .record(z.string(), z.number())
    .nullable()
    .describe(
      `order size in USD (10000, 100000, 1000000) -> cost in bps against the mid of a ${side} of that size. A size the visible book cannot fill is left out of the map; ` +
        'the whole field is null when the book fills none of them, or while no fresh book is measured',
    );

/** Market (spec 2.4). */
const market = z.object({
  venueId: z.string(),
  venue: z.string().describe('venue name'),
  pair: z.string().describe('BASE/QUOTE'),
  quote: z.string(),
  price: z.number().describe('last trade price in the served currency (from USD: a USDT or USDC quote at its measured rate, as the index)'),
  volume24h: z.number().describe('quote volume of the last 24 h, in the served currency (converted as price)'),
  share: z.number().describe("fraction of the asset's 24 h volume over the listed markets"),
  contract: z.enum(['spot', 'perpetual']),
  excluded: z.boolean().describe('excluded from the index price'),
  excludeReason: z
    .string()
    .nullable()
    .describe('why, per aggregate/METHODOLOGY.md "Index price": stale, crossed_book, low_share, outlier, no_usd_rate, perpetual; not_evaluated when the index has no verdict on the market yet; null when included'),
  updatedAt: z.number().int().describe('unix ms of the last trade'),
  spreadBps: nullableNumber('best ask minus best bid, in bps of the mid'),
  depthBid: nullableNumber('value of the bids within 2 % of the mid, in the served currency'),
  depthAsk: nullableNumber('value of the asks within 2 % of the mid, in the served currency'),
  depthBid1: nullableNumber('value of the bids within 1 % of the mid, in the served currency'),
  depthAsk1: nullableNumber('value of the asks within 1 % of the mid, in the served currency'),
  liquidityScore: z
    .number()
    .int()
    .min(0)
    .max(1000)
    .nullable()
    .describe('0 (illiquid) to 1000, from the cost of buying and selling $100 to $200k on the latest book and its balance (aggregate/METHODOLOGY.md, "Market quality and exchange score"); null while no fresh book of the market is measured'),
  costBuy: costs('buy'),
  costSell: costs('sell'),
});
export type Market = z.infer<typeof market>;

export const marketsResponse = z.object({
  markets: z.array(market).describe('largest 24 h volume first'),
  currency: z.string().describe('quote currency served'),
  rate: z.number().describe('units of the served currency per 1 USD, applied to price, volume24h and the depths (1 for usd); cost sizes stay in USD'),
  rateSource: z.string().describe('where the rate comes from: usd, measured:<venues> ..., reference:<publisher> <date>, or index:<asset> <time>'),
  at: z.number().int().describe('unix ms at which the response was built'),
});
export type MarketsResponse = z.infer<typeof marketsResponse>;

const marketsPath = z.object({ id: z.string().describe('asset id, e.g. bitcoin') });
const marketsQuery = z.object({ vs: vsParam });

/**
 * A `market_quality` row as the SQL names it: the measurement and its market (rows stored before
 * the score existed have none), the costs without the sizes the book could not fill.
 */
type QualityRow = Omit<MarketQuality, 'liquidityScore' | 'costBuy' | 'costSell'> & {
  venue: string;
  market: string;
  liquidityScore: number | null;
  costBuy: Record<string, number>;
  costSell: Record<string, number>;
};

/** The costs of a market as spec 2.4 types them: null rather than an empty map. */
const costsOrNull = (costs: Record<string, number> | undefined) => (costs && Object.keys(costs).length > 0 ? costs : null);

interface MarketRow {
  venue: string;
  market: string;
  quote: UsdQuote;
  price: number;
  updatedAt: number;
  quoteVolume: number;
}

/**
 * The markets of an asset that traded in the last 24 h, quoted in USD or a USD stablecoin: price,
 * volume and depths in USD, a stablecoin quote at its measured rate (as the index converts it).
 * Cost sizes stay in quote units (the book sink measures them so).
 * `excluded` and `excludeReason` are the index runner's latest verdict on the market. Spread,
 * depth and cost come from the latest book the collectors kept, when it is at most a minute old.
 */
export async function loadMarkets(store: StoreCalls, assetId: string, symbol: string, now: number): Promise<Market[]> {
  const [quoteRates, rows, quality, verdicts] = await Promise.all([
    loadUsdQuoteRates(store, now),
    store.rows<MarketRow>(marketsSql, { asset: assetId, from: now - dayMs, usd_quotes: usdQuotes }),
    store.rows<QualityRow>(qualitySql, { asset: assetId, from: now - qualityFreshMs }),
    store.rows<{ venue: string; market: string; excluded: boolean; reason: string }>(verdictsSql, { asset: assetId }),
  ]);
  const qualityOf = new Map(quality.map((q) => [`${q.venue}\u0000${q.market}`, q]));
  const verdictOf = new Map(verdicts.map((v) => [`${v.venue}\u0000${v.market}`, v]));
  const volumeUsd = (r: MarketRow) => r.quoteVolume * quoteRates[r.quote];
  const total = rows.reduce((sum, r) => sum + volumeUsd(r), 0);
  // Largest USD volume first; ties keep the SQL order (venue, market): sort is stable.
  const byVolume = [...rows].sort((a, b) => volumeUsd(b) - volumeUsd(a));
  return byVolume.map((r) => {
    const usdPer = quoteRates[r.quote];
    const inUsd = (amount: number | null) => (amount === null ? null : amount * usdPer);
    const venue = findVenue(r.venue);
    const q = qualityOf.get(`${r.venue}\u0000${r.market}`);
    const verdict = verdictOf.get(`${r.venue}\u0000${r.market}`);
    return {
      venueId: r.venue,
      venue: venue?.name ?? r.venue,
      pair: `${symbol.toUpperCase()}/${r.quote}`,
      quote: r.quote,
      price: r.price * usdPer,
      volume24h: volumeUsd(r),
      share: total > 0 ? volumeUsd(r) / total : 0,
      contract: venue?.contract ?? 'spot',
      excluded: verdict?.excluded ?? true,
      excludeReason: verdict ? verdict.reason || null : 'not_evaluated',
      updatedAt: r.updatedAt,
      spreadBps: q?.spreadBps ?? null,
      depthBid: inUsd(q?.depthBid ?? null),
      depthAsk: inUsd(q?.depthAsk ?? null),
      depthBid1: inUsd(q?.depthBid1 ?? null),
      depthAsk1: inUsd(q?.depthAsk1 ?? null),
      liquidityScore: q?.liquidityScore ?? null,
      costBuy: costsOrNull(q?.costBuy),
      costSell: costsOrNull(q?.costSell),
    };
  });
}

/** A market with its money fields (USD) times `rate`; base units, shares, bps and cost sizes do not change. */
function inCurrency(m: Market, rate: number): Market {
  const times = (usd: number | null) => (usd === null ? null : usd * rate);
  return {
    ...m,
    price: m.price * rate,
    volume24h: m.volume24h * rate,
    depthBid: times(m.depthBid),
    depthAsk: times(m.depthAsk),
    depthBid1: times(m.depthBid1),
    depthAsk1: times(m.depthAsk1),
  };
}

/** GET /v1/coins/{id}/markets (spec 4.6). */
export function marketsRoute(deps: { store: StoreCalls }): CachedRoute {
  return {
    path: '/v1/coins/:id/markets',
    refreshSeconds: 60,
    doc: {
      operationId: 'coinMarkets',
      tag: 'Coins',
      summary: 'The markets of an asset that traded in the last 24 h',
      path: marketsPath,
      query: marketsQuery,
      response: marketsResponse,
      errors: [400, 404, 503],
    },
    resolve(req) {
      const { vs } = parseParams(marketsQuery, req.query);
      const requested = String(req.params.id);
      namedAsset(requested);
      return {
        key: `${requested}|${vs}`,
        build: async (): Promise<MarketsResponse> => {
          // An alias (a discovered asset joined into another) answers for the asset it joined.
          const asset = await servedAsset(deps.store, requested);
          const { id } = asset;
          const at = Date.now();
          const [fx, markets] = await Promise.all([loadRate(deps.store, vs, at), loadMarkets(deps.store, id, asset.symbol, at)]);
          return { markets: markets.map((m) => inCurrency(m, fx.rate)), currency: vs, rate: fx.rate, rateSource: fx.source, at };
        },
      };
    },
  };
}
