import { z } from 'zod';
import { assetUniverse } from '../../infra/catalog/assetUniverse.ts';
import { latestIndexPrices, percentChange, type MeasuredRule } from '../../aggregate/indexPrices/latestIndexPrices.ts';
import type { StoreCalls } from '../../infra/store.ts';

/** Price entry (spec 2.5): what /v1/prices lists and the stream's prices channel sends. */
export const priceEntry = z.object({
  assetId: z.string(),
  symbol: z.string(),
  price: z.number().describe('USD index price of the latest second computed (aggregate/METHODOLOGY.md, "Index price")'),
  change24h: z.number().describe('percent change from the index price about 24 h earlier (or the oldest we have, when our history is shorter)'),
  measured: z.boolean().describe("true while the price comes from trades (not carried by the fail-closed rule), the last trade behind it is at most INDEX_STALE_AFTER_MS old, and the store's disk has at least STORE_MIN_FREE_MB free (below it, trades are no longer stored)"),
  updatedAt: z.number().int().describe('unix ms of the last trade behind the price'),
});
export type PriceEntry = z.infer<typeof priceEntry>;

export const pricesResponse = z.object({
  prices: z.array(priceEntry),
  at: z.number().int().describe('unix ms at which the response was built'),
});
export type PricesResponse = z.infer<typeof pricesResponse>;

/**
 * Index prices of `assetIds` (every asset served when unset; ids of no asset are left out), by
 * latestIndexPrices: an asset with no index row in the 48 h up to now is left out, it has no
 * current index price; change24h compares with its 24 h reference.
 */
export async function loadPrices(store: StoreCalls, assetIds: readonly string[] | undefined, now: number, measured: MeasuredRule): Promise<PricesResponse> {
  const universe = await assetUniverse(store);
  const ids = assetIds ? assetIds.filter((id) => universe.find(id)) : universe.assets.map((a) => a.id);
  const latest = await latestIndexPrices(store, ids, now, measured);
  const prices: PriceEntry[] = [];
  // Catalog order is market-cap rank order; discovered assets follow in order of first print.
  for (const asset of universe.assets) {
    const p = latest.get(asset.id);
    if (!p) continue;
    prices.push({
      assetId: asset.id,
      symbol: asset.symbol,
      price: p.price,
      change24h: percentChange(p.price, p.reference['24h'].price),
      measured: p.measured,
      updatedAt: p.updatedAt,
    });
  }
  return { prices, at: now };
}
