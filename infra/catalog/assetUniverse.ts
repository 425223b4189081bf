// The assets the service serves: the catalog's, then every discovered asset that has traded (its
// first print is in asset_first_prints) and was not joined into another (asset_aliases: the alias
// then names the asset it joined), named as its venue's listing names it where the listing gives a
// name (the collectors' latest status of one of its markets, market_connections.base_name). Read per
// store at most every few seconds and shared, so one response is built from one universe.
import type { StoreCalls } from '../store.ts';
import { catalogAssets, type CatalogAsset } from './catalog.ts';
import { discoveredAsset } from './discovered.ts';

export interface AssetUniverse {
  /** unix ms of the read. */
  at: number;
  /** The catalog's assets in catalog order, then the discovered ones in order of first print. */
  assets: readonly CatalogAsset[];
  /** The asset of an id: one of `assets`, or the asset an alias joined. */
  find(id: string): CatalogAsset | undefined;
}

/** How long a read universe is reused: a new listing is served within this of its first print being stored. */
export const universeMaxAgeMs = 5_000;

// Discovered ids hold `--`, catalog ids never do (catalog.ts).
const discoveredSql = `
SELECT asset, toUnixTimestamp64Milli(min(first_ts)) AS first
FROM asset_first_prints
WHERE position(asset, '--') > 0
GROUP BY asset
ORDER BY first, asset`;

/** The name the venue's listing gives each discovered asset, from the latest status that carried one. */
const namesSql = `
SELECT asset, argMax(base_name, ts) AS name
FROM market_connections
WHERE position(asset, '--') > 0 AND base_name != ''
GROUP BY asset`;

/** The universe as the store holds it now. */
export async function loadAssetUniverse(store: StoreCalls, at = Date.now()): Promise<AssetUniverse> {
  const [rows, aliases, names] = await Promise.all([
    store.rows<{ asset: string; first: number }>(discoveredSql),
    store.rows<{ alias: string; target: string }>('SELECT alias, target FROM asset_aliases FINAL'),
    store.rows<{ asset: string; name: string }>(namesSql),
  ]);
  const joined = new Map(aliases.map((a) => [a.alias, a.target]));
  const nameOf = new Map(names.map((n) => [n.asset, n.name]));
  const discovered = rows.filter((r) => !joined.has(r.asset)).flatMap((r) => discoveredAsset(r.asset, nameOf.get(r.asset)) ?? []);
  const assets = [...catalogAssets, ...discovered];
  const byId = new Map(assets.map((a) => [a.id, a]));
  return { at, assets, find: (id) => byId.get(joined.get(id) ?? id) };
}

const universes = new WeakMap<StoreCalls, { at: number; pending: Promise<AssetUniverse> }>();

/** The shared universe of `store`: read again once older than universeMaxAgeMs; a failed read is not kept. */
export function assetUniverse(store: StoreCalls): Promise<AssetUniverse> {
  const now = Date.now();
  const held = universes.get(store);
  if (held && now - held.at < universeMaxAgeMs) return held.pending;
  const entry = { at: now, pending: loadAssetUniverse(store, now) };
  universes.set(store, entry);
  entry.pending.catch(() => {
    if (universes.get(store) === entry) universes.delete(store);
  });
  return entry.pending;
}
