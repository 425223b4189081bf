import { z } from 'zod';
import { describeAsset } from '../../infra/catalog/discovered.ts';
import type { Config } from '../../infra/config.ts';
import type { StoreCalls } from '../../infra/store.ts';
import { measuredRule } from '../../aggregate/indexPrices/latestIndexPrices.ts';
import { parseParams } from '../errors.ts';
import { idListParam } from '../listQuery.ts';
import { loadPrices, pricesResponse } from '../read/prices.ts';
import type { CachedRoute } from '../responseCache.ts';

const maxIds = 250;

const pricesQuery = z.object({
  ids: idListParam('comma-separated asset ids; unknown ids are left out; when omitted, every asset (the catalog\'s, then the discovered ones)', maxIds),
});

/** GET /v1/prices (spec 4.7): unknown ids are left out, rows in catalog (rank) order, then discovered assets. */
export function pricesRoute(deps: { store: StoreCalls; config: Pick<Config, 'INDEX_STALE_AFTER_MS' | 'STORE_MIN_FREE_MB'> }): CachedRoute {
  return {
    path: '/v1/prices',
    refreshSeconds: 5,
    doc: {
      operationId: 'prices',
      tag: 'Coins',
      summary: 'USD index prices of the catalogue or of the listed assets',
      query: pricesQuery,
      response: pricesResponse,
      errors: [400],
    },
    resolve(req) {
      const { ids } = parseParams(pricesQuery, req.query);
      // Ids that can name no asset are left out here, so they make no cache entry of their own.
      const assetIds = ids ? [...new Set(ids.filter((id) => describeAsset(id)))].sort() : undefined;
      return {
        key: assetIds ? assetIds.join(',') : '*',
        build: () => loadPrices(deps.store, assetIds, Date.now(), measuredRule(deps.config)),
      };
    },
  };
}
