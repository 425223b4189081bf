import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { catalogVenues } from '../../infra/catalog/catalog.ts';
import type { Store } from '../../infra/store.ts';
import { parseParams } from '../errors.ts';
import type { CachedRoute } from '../responseCache.ts';

const exchangesSql = readFileSync(new URL('./exchanges.sql', import.meta.url), 'utf8');
export const dayMs = 86_400_000;

/** Row of the exchange list (our contract: the spec leaves it open). */
export const exchangeRow = z.object({
  id: z.string(),
  name: z.string(),
  url: z.string(),
  contract: z.enum(['spot', 'perpetual']).describe('what its markets trade'),
  marketCount: z.number().int().describe('markets that traded in the last 24 h'),
  trades24h: z.number().int(),
  volume24h: z.number().describe('USD volume of the last 24 h, markets quoted in USD or a USD stablecoin'),
});
export type ExchangeRow = z.infer<typeof exchangeRow>;

const maxLimit = 100;
const exchangesQuery = z.object({
  limit: z.coerce.number({ error: 'must be an integer' }).int('must be an integer').min(1, `must be 1 to ${maxLimit}`).max(maxLimit, `must be 1 to ${maxLimit}`).default(maxLimit).describe('rows per page'),
  page: z.coerce.number({ error: 'must be an integer' }).int('must be an integer').min(1, 'must be 1 or more').default(1).describe('1-based; ignored when offset is set'),
  offset: z.coerce.number({ error: 'must be an integer' }).int('must be an integer').min(0, 'must be 0 or more').optional().describe('rows to skip; wins over page'),
});

const exchangesResponse = z.object({
  exchanges: z.array(exchangeRow).describe('largest 24 h volume first'),
  page: z.number().int(),
  limit: z.number().int(),
  offset: z.number().int(),
  at: z.number().int().describe('unix ms at which the response was built'),
});

/** Every venue of the catalog with its last 24 h, largest volume first (ties by id). */
export async function loadExchangeRows(store: Store, now: number): Promise<ExchangeRow[]> {
  const rows = await store.rows<{ venue: string; markets: number; trades24h: number; volume24h: number }>(exchangesSql, {
    from_s: Math.floor((now - dayMs) / 1000),
  });
  const byVenue = new Map(rows.map((r) => [r.venue, r]));
  return catalogVenues
    .map((v) => {
      const r = byVenue.get(v.id);
      return { id: v.id, name: v.name, url: v.url, contract: v.contract, marketCount: r?.markets ?? 0, trades24h: r?.trades24h ?? 0, volume24h: r?.volume24h ?? 0 };
    })
    .sort((a, b) => b.volume24h - a.volume24h || (a.id < b.id ? -1 : 1));
}

/** GET /v1/exchanges: the paginated list (spec 4.17 rules). */
export function exchangesRoute(deps: { store: Store }): CachedRoute {
  return {
    path: '/v1/exchanges',
    refreshSeconds: 60,
    doc: {
      operationId: 'exchanges',
      tag: 'Market',
      summary: 'Exchanges we collect from, by 24 h volume',
      query: exchangesQuery,
      response: exchangesResponse,
      errors: [400],
    },
    resolve(req) {
      const { limit, page, offset: given } = parseParams(exchangesQuery, req.query);
      const offset = given ?? (page - 1) * limit;
      // The page echoed is the one the offset falls on.
      const shownPage = Math.floor(offset / limit) + 1;
      return {
        key: `${limit}|${offset}`,
        build: async () => {
          const at = Date.now();
          const all = await loadExchangeRows(deps.store, at);
          return { exchanges: all.slice(offset, offset + limit), page: given === undefined ? page : shownPage, limit, offset, at };
        },
      };
    },
  };
}
