import { z } from 'zod';
import { catalogCategories } from '../../infra/catalog/catalog.ts';
import type { Config } from '../../infra/config.ts';
import type { StoreCalls } from '../../infra/store.ts';
import { measuredRule } from '../../aggregate/indexPrices/latestIndexPrices.ts';
import { parseParams } from '../errors.ts';
import { flagParam, idListParam } from '../listQuery.ts';
import { sharedAssetMarkets, universeCapChange } from '../read/assetMarket.ts';
import type { CachedRoute } from '../responseCache.ts';
import { publicUrl } from '../coinImages.ts';

const universeRule = 'over the assets of the category with a price now and at or before that time (one fixed universe, so a new listing fakes no change); 0 when none has both';

/** Category row (spec 2.7); USD figures. */
const categoryRow = z.object({
  id: z.string().describe('category id (catalog slug)'),
  name: z.string().describe('display name'),
  market_cap: z.number().describe('sum of the USD market caps of its assets with a price'),
  market_cap_change_24h: z.number().describe(`percent change of the summed market cap over 24 h, ${universeRule}`),
  market_cap_change_7d: z.number().describe(`percent change of the summed market cap over 7 days, ${universeRule}`),
  volume_24h: z.number().describe('sum of their 24 h USD volumes on the index markets'),
  dominance: z.number().describe('percent of the total market cap of all assets with a price (/v1/global total_market_cap.usd); categories overlap, so these do not add up to 100'),
  asset_count: z.number().describe('assets of the category with a price (the ones summed)'),
  top_3_coins: z.array(z.string()).describe('logo URLs (small) of its three largest assets by market cap, fewer when it has fewer with a price'),
  top_3_coins_id: z.array(z.string()).describe('ids of the same assets, same order'),
});
export type CategoryRow = z.infer<typeof categoryRow>;

const categoriesQuery = z.object({
  ids: idListParam('comma-separated category ids: only these; unknown ids are left out'),
  all: flagParam('true includes categories with no asset with a price (their figures are 0)'),
});

const categoriesResponse = z.array(categoryRow).describe('largest market cap first');

/** GET /v1/categories (spec 4.11). */
export function categoriesRoute(deps: { store: StoreCalls; config: Pick<Config, 'INDEX_STALE_AFTER_MS' | 'STORE_MIN_FREE_MB' | 'PUBLIC_BASE_URL'> }): CachedRoute {
  return {
    path: '/v1/categories',
    refreshSeconds: 300,
    doc: {
      operationId: 'categories',
      tag: 'Market',
      summary: 'Categories (sectors) with market cap, changes, volume and dominance',
      query: categoriesQuery,
      response: categoriesResponse,
      errors: [400, 503],
    },
    resolve(req) {
      const { ids, all } = parseParams(categoriesQuery, req.query);
      const wanted = ids ? new Set(ids) : undefined;
      const chosen = catalogCategories.filter((c) => !wanted || wanted.has(c.id));
      return {
        key: `${all}|${chosen.map((c) => c.id).join(',')}`,
        build: async (): Promise<CategoryRow[]> => {
          const { at, priced } = await sharedAssetMarkets(deps.store, measuredRule(deps.config));
          const totalCap = priced.reduce((sum, m) => sum + m.marketCap, 0);
          const rows = chosen.map((category) => {
            // priced is in rank order, so the first three members are the largest.
            const members = priced.filter((m) => m.asset.categories.includes(category.id));
            const marketCap = members.reduce((sum, m) => sum + m.marketCap, 0);
            const top = members.slice(0, 3);
            return {
              id: category.id,
              name: category.name,
              market_cap: marketCap,
              market_cap_change_24h: universeCapChange(members, '24h', at) ?? 0,
              market_cap_change_7d: universeCapChange(members, '7d', at) ?? 0,
              volume_24h: members.reduce((sum, m) => sum + m.volume24h, 0),
              dominance: totalCap > 0 ? (marketCap / totalCap) * 100 : 0,
              asset_count: members.length,
              top_3_coins: top.map((m) => publicUrl(deps.config.PUBLIC_BASE_URL, m.asset.image.small)),
              top_3_coins_id: top.map((m) => m.asset.id),
            };
          });
          // Largest first; the catalog's category order breaks ties (sort is stable).
          return rows.filter((r) => all || r.asset_count > 0).sort((a, b) => b.market_cap - a.market_cap);
        },
      };
    },
  };
}
