import { z } from 'zod';
import type { StoreCalls } from '../../infra/store.ts';
import { parseParams } from '../errors.ts';
import { pageOf, paginationQuery } from '../listQuery.ts';
import { exchangeRow, loadExchangeRows } from '../read/exchangeRows.ts';
import type { CachedRoute } from '../responseCache.ts';

const maxLimit = 100;
const exchangesQuery = paginationQuery(maxLimit, maxLimit);

const exchangesResponse = z.object({
  exchanges: z.array(exchangeRow).describe('largest 24 h volume first'),
  page: z.number().int(),
  limit: z.number().int(),
  offset: z.number().int(),
  at: z.number().int().describe('unix ms at which the response was built'),
});

/** GET /v1/exchanges: the paginated list (spec 4.17 rules). */
export function exchangesRoute(deps: { store: StoreCalls }): CachedRoute {
  return {
    path: '/v1/exchanges',
    refreshSeconds: 60,
    doc: {
      operationId: 'exchanges',
      tag: 'Market',
      summary: 'Exchanges we collect from, by 24 h volume, with their exchange score',
      query: exchangesQuery,
      response: exchangesResponse,
      errors: [400],
    },
    resolve(req) {
      const { limit, page, offset } = pageOf(parseParams(exchangesQuery, req.query));
      return {
        key: `${limit}|${offset}`,
        build: async () => {
          const at = Date.now();
          const all = await loadExchangeRows(deps.store, at);
          return { exchanges: all.slice(offset, offset + limit), page, limit, offset, at };
        },
      };
    },
  };
}
