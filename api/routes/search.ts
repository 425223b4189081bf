import { z } from 'zod';
import { assetUniverse } from '../../infra/catalog/assetUniverse.ts';
import { catalogAssets, catalogCategories, catalogVenues, type CatalogAsset } from '../../infra/catalog/catalog.ts';
import type { StoreCalls } from '../../infra/store.ts';
import { parseParams } from '../errors.ts';
import type { CachedRoute } from '../responseCache.ts';

const maxResults = 25;

const searchQuery = z.object({
  q: z
    .string({ error: 'is required: the text to look for' })
    .trim()
    .min(1, 'must not be empty')
    .max(64, 'must be at most 64 characters')
    .describe('an id, ticker or name, or the start of one; case does not matter'),
});

const searchResponse = z.object({
  coins: z.array(z.object({ id: z.string(), symbol: z.string(), name: z.string() })).describe(`best matches first, at most ${maxResults}`),
  exchanges: z.array(z.object({ id: z.string(), name: z.string() })).describe(`best matches first, at most ${maxResults}`),
  categories: z.array(z.object({ id: z.string(), name: z.string() })).describe(`best matches first, at most ${maxResults}`),
});

/** 0 = exact id or symbol, 1 = exact name, 2 = starts with, 3 = contains; undefined = no match. */
function matchRank(q: string, fields: { exact: string[]; name: string }): number | undefined {
  const all = [...fields.exact, fields.name].map((f) => f.toLowerCase());
  if (fields.exact.some((f) => f.toLowerCase() === q)) return 0;
  if (fields.name.toLowerCase() === q) return 1;
  if (all.some((f) => f.startsWith(q))) return 2;
  if (all.some((f) => f.includes(q))) return 3;
  return undefined;
}

/** Best matches first; the catalog's own order (market-cap rank for coins) breaks ties. */
function best<T>(items: readonly T[], rank: (item: T) => number | undefined): T[] {
  return items
    .map((item, order) => ({ item, order, r: rank(item) }))
    .filter((x): x is { item: T; order: number; r: number } => x.r !== undefined)
    .sort((a, b) => a.r - b.r || a.order - b.order)
    .slice(0, maxResults)
    .map((x) => x.item);
}

/** The catalog's assets and the discovered ones; the catalog's alone while the store does not answer (names need no store). */
function searchableAssets(store: StoreCalls): Promise<readonly CatalogAsset[]> {
  return assetUniverse(store).then(
    (universe) => universe.assets,
    () => catalogAssets,
  );
}

/** GET /v1/search?q= (our contract: the spec names the endpoint only): the catalog's and the discovered coins. */
export function searchRoute(deps: { store: StoreCalls }): CachedRoute {
  return {
    path: '/v1/search',
    refreshSeconds: 300,
    doc: {
      operationId: 'search',
      tag: 'Market',
      summary: 'Coins, exchanges and categories by id, ticker or name',
      query: searchQuery,
      response: searchResponse,
      errors: [400],
    },
    resolve(req) {
      const q = parseParams(searchQuery, req.query).q.toLowerCase();
      return {
        key: q,
        build: async () => ({
          coins: best(await searchableAssets(deps.store), (a) => matchRank(q, { exact: [a.id, a.symbol], name: a.name })).map(({ id, symbol, name }) => ({ id, symbol, name })),
          exchanges: best(catalogVenues, (v) => matchRank(q, { exact: [v.id], name: v.name })).map(({ id, name }) => ({ id, name })),
          categories: best(catalogCategories, (c) => matchRank(q, { exact: [c.id], name: c.name })).map(({ id, name }) => ({ id, name })),
        }),
      };
    },
  };
}
