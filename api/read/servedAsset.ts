// The asset a request names, for the routes of one asset (coin, chart, ohlc, markets): a catalog
// id, or the id of a discovered asset that has traded (infra/catalog/assetUniverse.ts).
import { assetUniverse } from '../../infra/catalog/assetUniverse.ts';
import type { CatalogAsset } from '../../infra/catalog/catalog.ts';
import { describeAsset } from '../../infra/catalog/discovered.ts';
import type { StoreCalls } from '../../infra/store.ts';
import { ApiError } from '../errors.ts';

const notFound = (id: string) => new ApiError(404, 'not_found', `no asset with id ${JSON.stringify(id)}`);

/** In a route's `resolve`: the asset the id could name, or 404 before any cache entry is made for it. */
export function namedAsset(id: string): CatalogAsset {
  const asset = describeAsset(id);
  if (!asset) throw notFound(id);
  return asset;
}

/** In a route's `build`: the asset as served now, or 404 (a discovered id whose asset never traded names nothing). */
export async function servedAsset(store: StoreCalls, id: string): Promise<CatalogAsset> {
  const asset = (await assetUniverse(store)).find(id);
  if (!asset) throw notFound(id);
  return asset;
}
