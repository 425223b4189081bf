import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { findAsset, findVenue } from '../../infra/catalog/catalog.ts';
import type { Store } from '../../infra/store.ts';
import { vsParam } from '../currency.ts';
import { ApiError, parseParams } from '../errors.ts';
import type { CachedRoute } from '../responseCache.ts';

const marketsSql = readFileSync(new URL('./markets.sql', import.meta.url), 'utf8');
const dayMs = 86_400_000;

const nullableNumber = (description: string) => z.number().nullable().describe(`${description}; null until order-book metrics are measured`);

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
  liquidityScore: nullableNumber('0-1000'),
  costBuy: z.record(z.string(), z.number()).nullable().describe('order size -> cost in bps; null until measured'),
  costSell: z.record(z.string(), z.number()).nullable().describe('order size -> cost in bps; null until measured'),
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
 * aggregation methodology), so `excluded` is false.
 */
export async function loadMarkets(store: Store, assetId: string, symbol: string, now: number): Promise<Market[]> {
  const rows = await store.rows<MarketRow>(marketsSql, { asset: assetId, from: now - dayMs });
  const total = rows.reduce((sum, r) => sum + r.quoteVolume, 0);
  return rows.map((r) => {
    const venue = findVenue(r.venue);
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
      spreadBps: null,
      depthBid: null,
      depthAsk: null,
      depthBid1: null,
      depthAsk1: null,
      liquidityScore: null,
      costBuy: null,
      costSell: null,
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
