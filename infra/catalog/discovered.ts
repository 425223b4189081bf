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
}

const discoveredIdPattern = /^([a-z0-9]+(?:-[a-z0-9]+)*)--([a-z0-9]+(?:-[a-z0-9]+)*)$/;

/** The venue and ticker of a discovered id; undefined for anything else (a catalog id included). */
export function parseDiscoveredId(id: string): DiscoveredOrigin | undefined {
  const match = discoveredIdPattern.exec(id);
  if (!match || match[1]!.length > longestTickerSlug) return undefined;
  return { ticker: match[1]!, venue: match[2]! };
}

export function isDiscoveredId(id: string): boolean {
  return parseDiscoveredId(id) !== undefined;
}

/**
 * A discovered asset in the catalog's shape, so every endpoint serves it as it serves a catalog
 * asset: its symbol is the ticker, its name `venueName` (the name the venue's listing gives it,
 * where it gives one: infra/catalog/assetUniverse.ts) or else the ticker in capitals, its logo drawn
 * by the service, no category, no links, no contract, and a supply nobody knows (0, source
 * "unknown": market cap 0, ranked after every asset whose supply is known; api/read/assetMarket.ts).
 */
export function discoveredAsset(id: string, venueName?: string): CatalogAsset | undefined {
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
    description: `Found in ${origin.venue}'s market listing under the ticker ${ticker}${venueName ? `, named ${venueName} there` : ''}; not in the asset catalog. Its price and volume are measured from that venue's trades; its supply is unknown.`,
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
    platforms: {},
    hashing_algorithm: null,
    genesis_date: null,
    supply: { circulating: 0, total: 0, max: null, source: unknownSupplySource, asOf: '1970-01-01' },
    stablecoin: false,
    wrapped: false,
  };
}

/** Whether nothing is known of the asset's supply (a discovered asset, or a catalog entry that says so). */
export function supplyUnknown(asset: Pick<CatalogAsset, 'supply'>): boolean {
  return asset.supply.source === unknownSupplySource;
}

/**
 * What is served about an asset id: the catalog's entry, or the discovered asset the id names.
 * Says nothing of whether the asset ever traded: lists and look-ups of assets that exist read the
 * store (infra/catalog/assetUniverse.ts).
 */
export function describeAsset(id: string): CatalogAsset | undefined {
  return findAsset(id) ?? discoveredAsset(id);
}
