import { z } from 'zod';
import assetsJson from './assets.json' with { type: 'json' };
import venueAssetsJson from './venue-assets.json' with { type: 'json' };
import venuesJson from './venues.json' with { type: 'json' };

/** One asset of the catalog: `id` is the canonical slug every table and endpoint is keyed on. */
export const catalogAsset = z.object({
  id: z.string().regex(/^[a-z0-9-]+$/),
  symbol: z.string().min(1),
  name: z.string().min(1),
});
export type CatalogAsset = z.infer<typeof catalogAsset>;

export const catalogAssets: readonly CatalogAsset[] = z.array(catalogAsset).parse(assetsJson);

const assetsById = new Map(catalogAssets.map((a) => [a.id, a]));

export function findAsset(id: string): CatalogAsset | undefined {
  return assetsById.get(id);
}

/**
 * Venue ticker -> catalog id, per venue. Explicit on purpose: several assets share a ticker
 * across venues, so a ticker alone never identifies an asset.
 */
const venueAssets = z.record(z.string(), z.record(z.string(), z.string())).parse(venueAssetsJson);

export function assetIdForVenueTicker(venue: string, ticker: string): string | undefined {
  return venueAssets[venue]?.[ticker];
}

/** A venue we collect from. `contract` is what its markets trade: one venue id per market kind. */
export const catalogVenue = z.object({
  id: z.string().regex(/^[a-z0-9-]+$/),
  name: z.string().min(1),
  contract: z.enum(['spot', 'perpetual']),
  url: z.string().url(),
});
export type CatalogVenue = z.infer<typeof catalogVenue>;

export const catalogVenues: readonly CatalogVenue[] = z.array(catalogVenue).parse(venuesJson);
const venuesById = new Map(catalogVenues.map((v) => [v.id, v]));

export function findVenue(id: string): CatalogVenue | undefined {
  return venuesById.get(id);
}
