import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { findAsset, findVenue } from '../../infra/catalog/catalog.ts';
import type { MarketQuality } from '../../aggregate/marketQuality.ts';
import type { Store } from '../../infra/store.ts';
import { vsParam } from '../currency.ts';
import { ApiError, parseParams } from '../errors.ts';
import type { CachedRoute } from '../responseCache.ts';

const marketsSql = readFileSync(new URL('./markets.sql', import.meta.url), 'utf8');
const qualitySql = readFileSync(new URL('./marketQuality.sql', import.meta.url), 'utf8');
const dayMs = 86_400_000;
/** Book metrics older than this are not shown: the book they describe is gone. */
const qualityFreshMs = 60_000;

const nullableNumber = (description: string) => z.number().nullable().describe(`${description}; null while no fresh book of the market is measured`);
const costs = (side: string) =>
  z
    .record(z.string(), z.number().nullable())
    .nullable()
    .describe(`order size in USD -> cost in bps against the mid of a ${side} of that size; null for a size the visible book cannot fill, or for the whole field while no fresh book is measured`);

/** Market (spec 2.4). */
const market = z.object({
  venueId: z.string(),
  venue: z.string().describe('venue name'),
  pair: z.string().describe('BASE/QUOTE'),
  quote: z.string(),
  price: z.number().describe('last trade price, in the served currency'),
  volume24h: z.number().describe('volume of the last 24 h, in the served currency'),
  share: z.number().describe("fraction of the asset's 24 h volume over the listed markets"),
  contract: z.enum(['spot', 'perpetual']),
  excluded: z.boolean().describe('excluded from the index price'),
  excludeReason: z.string().nullable(),
  updatedAt: z.number().int().describe('unix ms of the last trade'),
  spreadBps: nullableNumber('best ask minus best bid, in bps of the mid'),
  depthBid: nullableNumber('bid depth within 2 % of the mid'),
  depthAsk: nullableNumber('ask depth within 2 % of the mid'),
  depthBid1: nullableNumber('bid depth within 1 % of the mid'),
  depthAsk1: nullableNumber('ask depth within 1 % of the mid'),
  liquidityScore: z.number().nullable().describe('0-1000; null until the liquidity score is computed'),
  costBuy: costs('buy'),
  costSell: costs('sell'),
});
export type Market = z.infer<typeof market>;

export const marketsResponse = z.object({
  markets: z.array(market).describe('largest 24 h volume first'),
  currency: z.string(),
  at: z.number().int().describe('unix ms at which the response was built'),
});
export type MarketsResponse = z.infer<typeof marketsResponse>;

const marketsPath = z.object({ id: z.string().describe('asset id, e.g. bitcoin') });
const marketsQuery = z.object({ vs: vsParam });

/** A `market_quality` row as the SQL names it: the measurement and its market. */
type QualityRow = MarketQuality & { venue: string; market: string };

interface MarketRow {
  venue: string;
  market: string;
  quote: string;
  price: number;
  updatedAt: number;
  quoteVolume: number;
}

/**
 * The markets of an asset that traded in the last 24 h. USD stablecoin quotes count at par, as in
 * the index price; every listed market is in the index for now (exclusion rules come with the
 * aggregation methodology), so `excluded` is false. Spread, depth and cost come from the latest
 * book the collectors kept, when it is at most a minute old.
 */
export async function loadMarkets(store: Store, assetId: string, symbol: string, now: number): Promise<Market[]> {
  const [rows, quality] = await Promise.all([
    store.rows<MarketRow>(marketsSql, { asset: assetId, from: now - dayMs }),
    store.rows<QualityRow>(qualitySql, { asset: assetId, from: now - qualityFreshMs }),
  ]);
  const qualityOf = new Map(quality.map((q) => [`${q.venue}\u0000${q.market}`, q]));
  const total = rows.reduce((sum, r) => sum + r.quoteVolume, 0);
  return rows.map((r) => {
    const venue = findVenue(r.venue);
    const q = qualityOf.get(`${r.venue}\u0000${r.market}`);
    return {
      venueId: r.venue,
      venue: venue?.name ?? r.venue,
      pair: `${symbol.toUpperCase()}/${r.quote}`,
      quote: r.quote,
      price: r.price,
      volume24h: r.quoteVolume,
      share: total > 0 ? r.quoteVolume / total : 0,
      contract: venue?.contract ?? 'spot',
      excluded: false,
      excludeReason: null,
      updatedAt: r.updatedAt,
      spreadBps: q?.spreadBps ?? null,
      depthBid: q?.depthBid ?? null,
      depthAsk: q?.depthAsk ?? null,
      depthBid1: q?.depthBid1 ?? null,
      depthAsk1: q?.depthAsk1 ?? null,
      liquidityScore: null,
      costBuy: q?.costBuy ?? null,
      costSell: q?.costSell ?? null,
    };
  });
}

/** GET /v1/coins/{id}/markets (spec 4.6). */
export function marketsRoute(deps: { store: Store }): CachedRoute {
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
      errors: [400, 404],
    },
    resolve(req) {
      const { vs } = parseParams(marketsQuery, req.query);
      const id = String(req.params.id);
      const asset = findAsset(id);
      if (!asset) throw new ApiError(404, 'not_found', `no asset with id ${JSON.stringify(id)}`);
      return {
        key: `${id}|${vs}`,
        build: async (): Promise<MarketsResponse> => {
          const at = Date.now();
          return { markets: await loadMarkets(deps.store, id, asset.symbol, at), currency: vs, at };
        },
      };
    },
  };
}
