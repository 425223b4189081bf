// The assets the service serves: the catalog's, then every discovered asset that has traded (its
// first print is in asset_first_prints) and was not joined into another (asset_aliases: the alias
// then names the asset it joined; an id retired at its delisting names the ticker's new listing
// once that trades), named as its venue's listing names it where the listing gives a
// name (the collectors' latest status of one of its markets, market_connections.base_name), with the
// contracts the listing gives (the latest status that gave any, base_contracts) and the total supply
// and decimals a configured chain gave for one of them (token_supplies). Read per
// store at most every few seconds and shared, so one response is built from one universe.
import type { StoreCalls } from '../store.ts';
import { mapInTurns } from '../turns.ts';
import { catalogAssets, type CatalogAsset } from './catalog.ts';
import { discoveredAsset, type ChainToken } from './discovered.ts';

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

/** How many discovered assets a read builds between two turns of the event loop (infra/turns.ts): the API's thread reads it. */
const rowsPerTurn = 250;

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

/** The contracts the venue's listing gives each discovered asset (platform -> address), from the latest status that carried any. */
const contractsSql = `
SELECT asset, argMax(base_contracts, ts) AS contracts
FROM market_connections
WHERE position(asset, '--') > 0 AND notEmpty(base_contracts)
GROUP BY asset`;

export interface ListedContracts {
  asset: string;
  /** Platform id -> contract address, in the order the listing gave them. */
  contracts: Record<string, string>;
}

/** The contracts each discovered asset's listing gives (also what the token-supplies job reads on chain). */
export function loadListedContracts(store: StoreCalls): Promise<ListedContracts[]> {
  return store.rows<ListedContracts>(contractsSql);
}

/**
 * What each contract answered on its chain, where its latest read succeeded (token_supplies, written
 * by aggregate/jobs/chains/tokenSupplies.ts); a latest read that failed leaves the contract out.
 */
const tokensSql = `
SELECT platform, address, name, decimals, total_supply, toUnixTimestamp64Milli(checked_at) AS checked_at
FROM token_supplies FINAL
WHERE error = ''`;

/** A contract's key in the maps of token reads: its platform and its address (lower case). */
export const contractKey = (platform: string, address: string) => `${platform} ${address}`;

interface TokenRow {
  platform: string;
  address: string;
  name: string;
  decimals: number;
  total_supply: string;
  checked_at: number;
}

/**
 * A token amount in base units as whole tokens: the whole part divided exactly in integers, then
 * the remainder, so a round supply stays round (Number(raw) / 10 ** decimals rounds twice:
 * 1,413,351,431 x 10^18 came out 1,413,351,430.9999998).
 */
export function wholeTokens(raw: bigint, decimals: number): number {
  const unit = 10n ** BigInt(decimals);
  return Number(raw / unit) + Number(raw % unit) / 10 ** decimals;
}

/** The token of the first of `contracts` (in the listing's order) whose chain answered; its supply in whole units. */
function tokenOf(contracts: Readonly<Record<string, string>> | undefined, tokens: ReadonlyMap<string, TokenRow>): ChainToken | undefined {
  for (const [platform, address] of Object.entries(contracts ?? {})) {
    const row = tokens.get(contractKey(platform, address.toLowerCase()));
    if (!row) continue;
    return { platform, name: row.name, decimals: row.decimals, totalSupply: wholeTokens(BigInt(row.total_supply), row.decimals), checkedAt: row.checked_at };
  }
  return undefined;
}

/** A discovered asset as last built, and the facts it was built from (factsKey). */
interface BuiltAsset {
  facts: string;
  asset: CatalogAsset | undefined;
}

/**
 * The discovered assets of each store's last read, by id. An asset whose listed facts did not
 * change is the same object again, not built anew (a description, a logo, the platforms) at every
 * read: thousands of them, in the API's thread, every few seconds.
 */
const lastBuilt = new WeakMap<StoreCalls, Map<string, BuiltAsset>>();

/** What a discovered asset is built from, as one string: equal strings build equal assets. */
function factsKey(name: string | undefined, contracts: Readonly<Record<string, string>> | undefined, token: ChainToken | undefined): string {
  let key = name ?? '';
  for (const platform in contracts) key += `\u0001${platform}=${contracts[platform]}`;
  if (token) key += `\u0002${token.platform}|${token.name}|${token.decimals}|${token.totalSupply}|${token.checkedAt}`;
  return key;
}

/** The universe as the store holds it now. */
export async function loadAssetUniverse(store: StoreCalls, at = Date.now()): Promise<AssetUniverse> {
  const [rows, aliases, names, contracts, tokenRows] = await Promise.all([
    store.rows<{ asset: string; first: number }>(discoveredSql),
    store.rows<{ alias: string; target: string; reason: string }>('SELECT alias, target, reason FROM asset_aliases FINAL'),
    store.rows<{ asset: string; name: string }>(namesSql),
    loadListedContracts(store),
    store.rows<TokenRow>(tokensSql),
  ]);
  // A retired id (reason delisted) traded again is the ticker's new listing, no longer an alias; an
  // id the operator joined stays one (trades a collector still sent under it move at the next join).
  const traded = new Set(rows.map((r) => r.asset));
  const joined = new Map(aliases.filter((a) => a.reason !== 'delisted' || !traded.has(a.alias)).map((a) => [a.alias, a.target]));
  const nameOf = new Map(names.map((n) => [n.asset, n.name]));
  const contractsOf = new Map(contracts.map((c) => [c.asset, c.contracts]));
  const tokens = new Map(tokenRows.map((t) => [contractKey(t.platform, t.address), t]));
  const before = lastBuilt.get(store);
  const built = new Map<string, BuiltAsset>();
  const assetOfRow = await mapInTurns(rows, rowsPerTurn, (r) => {
    if (joined.has(r.asset)) return undefined;
    const name = nameOf.get(r.asset);
    const listed = contractsOf.get(r.asset);
    const token = tokenOf(listed, tokens);
    const facts = factsKey(name, listed, token);
    const held = before?.get(r.asset);
    const entry = held?.facts === facts ? held : { facts, asset: discoveredAsset(r.asset, { name, contracts: listed, ...(token ? { token } : {}) }) };
    built.set(r.asset, entry);
    return entry.asset;
  });
  const discovered = assetOfRow.filter((asset) => asset !== undefined);
  lastBuilt.set(store, built);
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
