// Assets the catalog does not map, found in the venues' listings (issue "the whole market"). A
// discovered asset is what one venue lists under one ticker: its id names both, so it is the same
// on every start and in every process without any coordination, and no two venues' tickers are
// ever merged by it (a ticker alone never identifies an asset). Everything served about it
// derives from the id and from what we measured; its supply is unknown.
import { findAsset, findVenue, type CatalogAsset } from './catalog.ts';

/** Catalog ids never contain it (catalog.ts refuses them): the id space of discovered assets. */
export const discoveredSeparator = '--';

/** What a discovered asset's supply says: no source knows it. */
export const unknownSupplySource = 'unknown';

/** A supply read from a chain's token contract (`chain:<platform>`): a total supply, its circulating part unknown. */
export const chainSupplySourcePrefix = 'chain:';

/** Longest ticker part of an id: venues' tickers are short; anything longer is not a ticker. */
const longestTickerSlug = 24;

/** The ticker as an id part: lower case, every run of other characters one `-`, trimmed. */
export function tickerSlug(ticker: string): string {
  return ticker
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '')
    .slice(0, longestTickerSlug);
}

/** The id of `ticker` as `venue` lists it, e.g. `foo--binance`; undefined for a ticker with no letter or digit. */
export function discoveredAssetId(venue: string, ticker: string): string | undefined {
  const slug = tickerSlug(ticker);
  return slug === '' ? undefined : `${slug}${discoveredSeparator}${venue}`;
}

export interface DiscoveredOrigin {
  /** The venue whose listing it was found in. */
  venue: string;
  /** The ticker's slug (lower case): the asset's symbol. */
  ticker: string;
  /** A retired id's: the day (YYYY-MM-DD, UTC) its markets left the venue's listing. */
  delistedOn?: string;
}

const discoveredIdPattern = /^([a-z0-9]+(?:-[a-z0-9]+)*)--([a-z0-9]+(?:-[a-z0-9]+)*)(?:--(\d{4})(\d{2})(\d{2}))?$/;

/** The venue and ticker of a discovered id (and its delisting day, if retired); undefined for anything else (a catalog id included). */
export function parseDiscoveredId(id: string): DiscoveredOrigin | undefined {
  const match = discoveredIdPattern.exec(id);
  if (!match || match[1]!.length > longestTickerSlug) return undefined;
  const [, ticker, venue, year, month, day] = match;
  return year ? { ticker: ticker!, venue: venue!, delistedOn: `${year}-${month}-${day}` } : { ticker: ticker!, venue: venue! };
}

/**
 * The id a delisted discovered asset's history is kept under, e.g. `foo--gate--20261130` (the UTC
 * day of its delisting), so that the id `foo--gate` is free for whatever the venue lists as FOO
 * next; undefined for an id that is not a discovered one, or already retired. Retirements wait a
 * day after the delisting (aggregate/jobs/delistedRetirements.ts), so no two of one id fall on one day.
 */
export function retiredAssetId(id: string, delistedAt: number): string | undefined {
  const origin = parseDiscoveredId(id);
  if (!origin || origin.delistedOn) return undefined;
  return `${id}${discoveredSeparator}${new Date(delistedAt).toISOString().slice(0, 10).replaceAll('-', '')}`;
}

export function isDiscoveredId(id: string): boolean {
  return parseDiscoveredId(id) !== undefined;
}

/** What the venue's listing says of a discovered asset, where it says anything (infra/catalog/assetUniverse.ts). */
export interface ListedFacts {
  /** Its full name. */
  name?: string;
  /** Platform id -> contract address. */
  contracts?: Readonly<Record<string, string>>;
  /** What one of those contracts answered on a configured chain (aggregate/jobs/chains/tokenSupplies.ts). */
  token?: ChainToken;
}

/** A token contract's ERC-20 metadata, as read from its chain. */
export interface ChainToken {
  platform: string;
  /** name() of the contract; '' when it gave none readable. */
  name: string;
  decimals: number;
  /** totalSupply() over 10^decimals. */
  totalSupply: number;
  /** When it was read, unix ms. */
  checkedAt: number;
}

/**
 * A discovered asset in the catalog's shape, so every endpoint serves it as it serves a catalog
 * asset: its symbol is the ticker, its name the one the venue's listing gives it, or else the one
 * its token contract gives, or else the ticker in capitals, its logo drawn by the service, no
 * category, no links, as `platforms` the contracts the listing gives (decimals where the chain
 * answered), and a supply nobody knows (0, source "unknown": market cap 0, ranked after every
 * asset whose supply is known; api/read/assetMarket.ts), except a total supply read from a chain
 * (source `chain:<platform>`), whose circulating part stays unknown (0: market cap 0 all the same).
 */
export function discoveredAsset(id: string, listed: ListedFacts = {}): CatalogAsset | undefined {
  const { token } = listed;
  const venueName = listed.name ?? (token?.name || undefined);
  const origin = parseDiscoveredId(id);
  if (!origin || !findVenue(origin.venue)) return undefined;
  const image = (size: string) => `/assets/coins/${id}.svg?size=${size}`;
  const ticker = origin.ticker.toUpperCase();
  return {
    id,
    symbol: origin.ticker,
    name: venueName ?? ticker,
    image: { thumb: image('thumb'), small: image('small'), large: image('large') },
    categories: [],
    description: `Found in ${origin.venue}'s market listing under the ticker ${ticker}${listed.name ? `, named ${listed.name} there` : ''}; not in the asset catalog.${origin.delistedOn ? ` Its markets left that listing on ${origin.delistedOn}: its history is kept under this id, and the ticker may name another asset there since.` : ''} Its price and volume are measured from that venue's trades; ${token ? `its total supply is its token contract's on ${token.platform}, its circulating supply is unknown` : 'its supply is unknown'}.`,
    links: {
      homepage: [],
      whitepaper: '',
      blockchain_site: [],
      official_forum_url: [],
      chat_url: [],
      announcement_url: [],
      twitter_screen_name: '',
      facebook_username: '',
      telegram_channel_identifier: '',
      bitcointalk_thread_identifier: null,
      subreddit_url: '',
      snapshot_url: null,
      repos_url: { github: [], bitbucket: [] },
    },
    platforms: Object.fromEntries(
      Object.entries(listed.contracts ?? {}).map(([platform, address]) => [platform, { contract_address: address, decimal_place: token?.platform === platform ? token.decimals : null }]),
    ),
    hashing_algorithm: null,
    genesis_date: null,
    supply: token
      ? { circulating: 0, total: token.totalSupply, max: null, source: `${chainSupplySourcePrefix}${token.platform}`, asOf: new Date(token.checkedAt).toISOString().slice(0, 10) }
      : { circulating: 0, total: 0, max: null, source: unknownSupplySource, asOf: '1970-01-01' },
    stablecoin: false,
    wrapped: false,
  };
}

/** Whether nothing is known of the asset's supply (a discovered asset, or a catalog entry that says so). */
export function supplyUnknown(asset: Pick<CatalogAsset, 'supply'>): boolean {
  return asset.supply.source === unknownSupplySource;
}

/** Whether its circulating supply, hence its market cap, is unknown: no supply known, or only a chain's total supply. */
export function circulatingUnknown(asset: Pick<CatalogAsset, 'supply'>): boolean {
  return supplyUnknown(asset) || asset.supply.source.startsWith(chainSupplySourcePrefix);
}

/**
 * What is served about an asset id: the catalog's entry, or the discovered asset the id names.
 * Says nothing of whether the asset ever traded: lists and look-ups of assets that exist read the
 * store (infra/catalog/assetUniverse.ts).
 */
export function describeAsset(id: string): CatalogAsset | undefined {
  return findAsset(id) ?? discoveredAsset(id);
}
