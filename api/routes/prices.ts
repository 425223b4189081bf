import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { catalogAssets } from '../../infra/catalog/catalog.ts';
import type { Config } from '../../infra/config.ts';
import type { Store } from '../../infra/store.ts';
import { parseParams } from '../errors.ts';
import { idListParam } from '../listQuery.ts';
import type { CachedRoute } from '../responseCache.ts';

const pricesSql = readFileSync(new URL('./prices.sql', import.meta.url), 'utf8');

/** Price entry (spec 2.5). */
const priceEntry = z.object({
  assetId: z.string(),
  symbol: z.string(),
  price: z.number().describe('USD index price of the latest second computed (aggregate/METHODOLOGY.md, "Index price")'),
  change24h: z.number().describe('percent change from the index price about 24 h earlier (or the oldest we have, when our history is shorter)'),
  measured: z.boolean().describe('true while the price comes from trades (not carried by the fail-closed rule) and the last trade behind it is at most INDEX_STALE_AFTER_MS old'),
  updatedAt: z.number().int().describe('unix ms of the last trade behind the price'),
});
export type PriceEntry = z.infer<typeof priceEntry>;

export const pricesResponse = z.object({
  prices: z.array(priceEntry),
  at: z.number().int().describe('unix ms at which the response was built'),
});
export type PricesResponse = z.infer<typeof pricesResponse>;

const maxIds = 250;
const day = 86_400;

const pricesQuery = z.object({
  ids: idListParam('comma-separated asset ids; unknown ids are left out; when omitted, the whole catalogue', maxIds),
});

/**
 * Index prices per asset. The query reads the last 48 hours of per-second index prices only, so
 * its cost does not grow with history:
 * - an asset with no index row in 48 h (its index stops a day after its markets' last trade) is
 *   left out: it has no current index price;
 * - measured is false for a price carried by the fail-closed rule, and once its last trade is older
 *   than INDEX_STALE_AFTER_MS;
 * - change24h compares with the latest second at or before now - 24 h; when our history of the
 *   asset is shorter than that (or it had no trade in the day before now - 24 h), with the oldest
 *   second we have in the window.
 */
export async function loadPrices(store: Store, assetIds: readonly string[], now: number, staleAfterMs: number): Promise<PricesResponse> {
  if (assetIds.length === 0) return { prices: [], at: now };
  const nowS = Math.floor(now / 1000);
  const rows = await store.rows<{ asset: string; price: number; updatedAt: number; carried: number | boolean; referencePrice: number }>(pricesSql, {
    assets: assetIds,
    ref_s: nowS - day,
    from_s: nowS - 2 * day,
  });
  const byAsset = new Map(rows.map((r) => [r.asset, r]));
  const prices: PriceEntry[] = [];
  // Catalog order is market-cap rank order.
  for (const asset of catalogAssets) {
    const row = byAsset.get(asset.id);
    if (!row) continue;
    prices.push({
      assetId: asset.id,
      symbol: asset.symbol,
      price: row.price,
      change24h: (row.price / row.referencePrice - 1) * 100,
      measured: !row.carried && now - row.updatedAt <= staleAfterMs,
      updatedAt: row.updatedAt,
    });
  }
  return { prices, at: now };
}

/** GET /v1/prices (spec 4.7): unknown ids are left out, rows in catalog (rank) order. */
export function pricesRoute(deps: { store: Store; config: Pick<Config, 'INDEX_STALE_AFTER_MS'> }): CachedRoute {
  const catalogIds = new Set(catalogAssets.map((a) => a.id));
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
      const assetIds = ids ? [...new Set(ids.filter((id) => catalogIds.has(id)))].sort() : [...catalogIds].sort();
      return {
        key: ids ? assetIds.join(',') : '*',
        build: () => loadPrices(deps.store, assetIds, Date.now(), deps.config.INDEX_STALE_AFTER_MS),
      };
    },
  };
}
