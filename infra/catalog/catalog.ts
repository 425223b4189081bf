import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { z } from 'zod';
import bundledAssets from './assets.json' with { type: 'json' };
import bundledCategories from './categories.json' with { type: 'json' };
import venueAssetsJson from './venue-assets.json' with { type: 'json' };
import venuesJson from './venues.json' with { type: 'json' };
import { ccxtCatalogVenues, ccxtVenueAssets } from './ccxtCatalog.ts';
import { channels } from '../events.ts';

// The file format is documented field by field in CATALOG.md; keep the two in step.
const slug = z.string().regex(/^[a-z0-9-]+$/, 'must be a lower-case slug (a-z, 0-9, -)');
const webUrl = z.url({ protocol: /^https?$/, message: 'must be an http(s) URL' });
const urlOrEmpty = z.union([z.literal(''), webUrl]);
/** Logos: an absolute http(s) URL, or a path the service serves itself (the bundled catalog uses /assets/coins/<id>.svg). */
const imageUrl = z.union([webUrl, z.string().regex(/^\/[^/]/, 'must be an http(s) URL or a path starting with /')]);
const isoDate = z.iso.date('must be a date YYYY-MM-DD');
const amount = z.number().finite().nonnegative();

/** Supply in whole units of the asset (not base units), as of `asOf`. */
const catalogSupply = z.strictObject({
  circulating: amount,
  total: amount,
  max: amount.nullable(),
  source: z.string().min(1),
  asOf: isoDate,
});

/** One asset of the catalog: `id` is the canonical slug every table and endpoint is keyed on. */
export const catalogAsset = z.strictObject({
  id: slug,
  symbol: z.string().min(1).refine((s) => s === s.toLowerCase(), 'must be lower case'),
  name: z.string().min(1),
  image: z.strictObject({ thumb: imageUrl, small: imageUrl, large: imageUrl }),
  categories: z.array(slug),
  description: z.string(),
  links: z.strictObject({
    homepage: z.array(webUrl),
    whitepaper: urlOrEmpty,
    blockchain_site: z.array(webUrl),
    official_forum_url: z.array(webUrl),
    chat_url: z.array(webUrl),
    announcement_url: z.array(webUrl),
    twitter_screen_name: z.string(),
    facebook_username: z.string(),
    telegram_channel_identifier: z.string(),
    bitcointalk_thread_identifier: z.string().nullable(),
    subreddit_url: urlOrEmpty,
    snapshot_url: webUrl.nullable(),
    repos_url: z.strictObject({ github: z.array(webUrl), bitbucket: z.array(webUrl) }),
  }),
  /** Token contracts per chain (CoinGecko platform ids); {} for a chain's native coin. */
  platforms: z.record(
    z.string().min(1),
    z.strictObject({ contract_address: z.string().min(1), decimal_place: z.number().int().min(0).max(36).nullable() }),
  ),
  /** Proof-of-work hash function; null for tokens and for chains without mining. */
  hashing_algorithm: z.string().min(1).nullable(),
  genesis_date: isoDate.nullable(),
  supply: catalogSupply,
  /** Pegged to a fiat currency. */
  stablecoin: z.boolean(),
  /** A wrapped, staked or bridged form of another asset. */
  wrapped: z.boolean(),
});
export type CatalogAsset = z.infer<typeof catalogAsset>;

export const catalogCategory = z.strictObject({ id: slug, name: z.string().min(1), description: z.string() });
export type CatalogCategory = z.infer<typeof catalogCategory>;

export class CatalogError extends Error {
  override name = 'CatalogError';
}

/** Validates one catalog file; the error names the file, the entry (index and id) and the field. */
function parseCatalogFile<T extends { id: string }>(schema: z.ZodType<T>, json: unknown, file: string): T[] {
  const result = z.array(schema).safeParse(json);
  if (!result.success) {
    const lines = result.error.issues.slice(0, 10).map((issue) => {
      const [index, ...field] = issue.path;
      if (typeof index !== 'number') return `  ${issue.message}`;
      const id = (json as { id?: unknown }[])[index]?.id;
      return `  entry ${index}${typeof id === 'string' ? ` (${JSON.stringify(id)})` : ''}, field ${field.join('.') || '(entry)'}: ${issue.message}`;
    });
    throw new CatalogError(`${file}: invalid catalog file\n${lines.join('\n')}`);
  }
  const seen = new Set<string>();
  result.data.forEach((entry, index) => {
    if (seen.has(entry.id)) throw new CatalogError(`${file}: entry ${index}, field id: ${JSON.stringify(entry.id)} appears twice`);
    seen.add(entry.id);
  });
  return result.data;
}

function readJson(file: string): unknown {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new CatalogError(`${file}: cannot read (${(err as Error).message})`);
  }
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new CatalogError(`${file}: not valid JSON (${(err as Error).message})`);
  }
}

/**
 * The asset and category catalog: the bundled files, or `assets.json` and `categories.json` from
 * `dir` (MDS_CATALOG_DIR) which then replace them whole. Every asset's categories must exist.
 */
export function loadCatalog(dir?: string): { assets: CatalogAsset[]; categories: CatalogCategory[] } {
  const assetsFile = dir ? resolve(dir, 'assets.json') : 'infra/catalog/assets.json (bundled)';
  const categoriesFile = dir ? resolve(dir, 'categories.json') : 'infra/catalog/categories.json (bundled)';
  const assets = parseCatalogFile(catalogAsset, dir ? readJson(assetsFile) : bundledAssets, assetsFile);
  const categories = parseCatalogFile(catalogCategory, dir ? readJson(categoriesFile) : bundledCategories, categoriesFile);
  const categoryIds = new Set(categories.map((c) => c.id));
  assets.forEach((asset, index) => {
    // `--` separates the ticker from the venue in the ids of discovered assets (discovered.ts).
    if (asset.id.includes('--')) throw new CatalogError(`${assetsFile}: entry ${index} (${JSON.stringify(asset.id)}), field id: must not contain "--" (reserved for discovered assets, e.g. foo--binance)`);
    const unknown = asset.categories.find((c) => !categoryIds.has(c));
    if (unknown !== undefined) {
      throw new CatalogError(`${assetsFile}: entry ${index} (${JSON.stringify(asset.id)}), field categories: ${JSON.stringify(unknown)} is not in ${categoriesFile}`);
    }
  });
  return { assets, categories };
}

// Read at import, like the bundled JSON: every module that imports the catalog sees the same one.
const catalog = loadCatalog(process.env.MDS_CATALOG_DIR || undefined);

/** In market-cap rank order of the file. */
export const catalogAssets: readonly CatalogAsset[] = catalog.assets;
export const catalogCategories: readonly CatalogCategory[] = catalog.categories;

const assetsById = new Map(catalogAssets.map((a) => [a.id, a]));
const categoriesById = new Map(catalogCategories.map((c) => [c.id, c]));

export function findAsset(id: string): CatalogAsset | undefined {
  return assetsById.get(id);
}

export function findCategory(id: string): CatalogCategory | undefined {
  return categoriesById.get(id);
}

// Bitcoin's supply follows from its block height. The anchor is the fourth halving: block 840,000,
// header time 1713571767 (2024-04-20T00:09:27Z); later heights are estimated at the 10-minute target.
export const bitcoinAnchor = { height: 840_000, at: Date.UTC(2024, 3, 20, 0, 9, 27) } as const;
const bitcoinTargetSpacingMs = 600_000;
const bitcoinHalvingInterval = 210_000;
const bitcoinMaxSupply = 21_000_000;

/** Header time of the genesis block (2009-01-03T18:15:05Z): before it there is no chain. */
const bitcoinGenesisAt = Date.UTC(2009, 0, 3, 18, 15, 5);

/** Estimated height of the chain tip at `at` (unix ms): the anchor plus one block per 10 minutes; −1 before genesis. */
export function bitcoinHeightAt(at: number): number {
  if (at < bitcoinGenesisAt) return -1;
  return Math.max(0, bitcoinAnchor.height + Math.floor((at - bitcoinAnchor.at) / bitcoinTargetSpacingMs));
}

/**
 * BTC created by the blocks below `height` (heights 0 … height − 1), genesis included. Each block's
 * subsidy is 50 BTC in satoshi shifted right once per 210,000 blocks, i.e. rounded down to a whole
 * satoshi as Bitcoin Core's GetBlockSubsidy does; the sum stays an exact integer of satoshi.
 */
export function bitcoinIssuedBelow(height: number): number {
  let satoshi = 0;
  for (let halvings = 0; halvings < 64; halvings++) {
    const subsidy = Math.floor(5_000_000_000 / 2 ** halvings);
    const first = halvings * bitcoinHalvingInterval;
    if (subsidy === 0 || height <= first) break;
    satoshi += (Math.min(height, first + bitcoinHalvingInterval) - first) * subsidy;
  }
  return satoshi / 1e8;
}

export interface SupplyAt {
  circulating: number;
  total: number;
  max: number | null;
  source: string;
}

/** Supply schedules by asset id; assets without one report the catalog's figures. */
const supplySchedules: Record<string, (at: number) => SupplyAt> = {
  bitcoin(at) {
    const tip = bitcoinHeightAt(at);
    const issued = bitcoinIssuedBelow(tip + 1);
    return { circulating: issued, total: issued, max: bitcoinMaxSupply, source: `computed: issuance schedule at estimated height ${tip}` };
  },
};

/** The asset's supply at `at` (unix ms): from its issuance schedule where it has one, else the catalog's figures. */
export function supplyAt(asset: CatalogAsset, at: number): SupplyAt {
  const schedule = supplySchedules[asset.id];
  if (schedule) return schedule(at);
  const { circulating, total, max, source } = asset.supply;
  return { circulating, total, max, source };
}

/**
 * Venue ticker -> catalog id, per venue. Explicit on purpose: several assets share a ticker
 * across venues, so a ticker alone never identifies an asset.
 */
const venueAssets = { ...ccxtVenueAssets, ...z.record(z.string(), z.record(z.string(), z.string())).parse(venueAssetsJson) };

export function assetIdForVenueTicker(venue: string, ticker: string): string | undefined {
  return venueAssets[venue]?.[ticker];
}

/** A venue we collect from. `contract` is what its markets trade: one venue id per market kind. */
export const catalogVenue = z.object({
  id: z.string().regex(/^[a-z0-9-]+$/),
  name: z.string().min(1),
  contract: z.enum(['spot', 'perpetual']),
  url: z.string().url(),
  /** ISO 3166 codes and logo, where known (ccxt's descriptions give them for the ccxt venues). */
  countries: z.array(z.string()).optional(),
  logo: z.string().url().optional(),
  /** What our collector of the venue reads (a native venue's descriptor says the same: a test checks). */
  channels: z.array(z.enum(channels)).min(1),
  /** Its liquidation feed publishes a sample, not every liquidation (the descriptor says which rule). */
  liquidationsSampled: z.boolean().default(false),
});
export type CatalogVenue = z.infer<typeof catalogVenue>;

const nativeCatalogVenues = z.array(catalogVenue).parse(venuesJson);
const nativeVenueIds = new Set(nativeCatalogVenues.map((v) => v.id));
/** The native venues (venues.json), then the ccxt ones (ccxt-venues.json) no native venue replaces. */
export const catalogVenues: readonly CatalogVenue[] = [
  ...nativeCatalogVenues,
  ...ccxtCatalogVenues
    .filter((v) => !nativeVenueIds.has(v.id))
    // ccxt's unified liquidation feeds say nothing of sampling: none is declared sampled.
    .map(({ id, name, contract, url, countries, logo, channels }) => ({ id, name, contract, url, countries, ...(logo ? { logo } : {}), channels, liquidationsSampled: false })),
];
const venuesById = new Map(catalogVenues.map((v) => [v.id, v]));

export function findVenue(id: string): CatalogVenue | undefined {
  return venuesById.get(id);
}
