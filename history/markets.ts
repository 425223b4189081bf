// The market of an archive row as the collector of the venue knows it: base asset from the catalog,
// a quote the collector follows, and the contract size that turns the file's quantities into base
// units (ingest/normalize.ts, baseQuantity). A symbol the catalog does not map is refused, as the
// collector leaves it out (selectMarkets), unless discovering: then it is the discovered asset the
// collector stores it under.
import { assetIdForVenueTicker } from '../infra/catalog/catalog.ts';
import { discoveredAssetId } from '../infra/catalog/discovered.ts';
import { findNativeVenue } from '../ingest/venues/registry.ts';
import { venueEndpoints, type MarketListing } from '../ingest/venue.ts';
import { venueIo } from '../ingest/venueIo.ts';
import type { RowRefusal } from './archives/format.ts';
import type { ArchiveSource } from './archives/source.ts';

export interface ImportMarket {
  venue: string;
  symbol: string;
  asset: string;
  quote: string;
  /** Base units per contract ('1' where the file's quantities are base units already). */
  contractSize: string;
}

/** Contract sizes by symbol, from the venue's instrument list (as the collector reads it). */
export type ContractSizes = ReadonlyMap<string, string>;

/** The venue's markets with their contract sizes, read as the collector reads them (VENUE_<ID>_REST_URL applies). */
export async function loadContractSizes(venue: string): Promise<ContractSizes> {
  const descriptor = findNativeVenue(venue);
  if (!descriptor) throw new Error(`no collector for ${venue}`);
  const listings: MarketListing[] = await descriptor.listMarkets(venueIo, venueEndpoints(descriptor));
  return new Map(listings.map((l) => [l.symbol, l.contractSize]));
}

/** The market of `symbol` on the source's venue, or why its rows are refused. */
export function resolveMarket(source: ArchiveSource, symbol: string, contracts?: ContractSizes, discover = false): ImportMarket | RowRefusal {
  const split = source.splitSymbol(symbol);
  if (!split) return { refused: `market ${symbol}: not a symbol of ${source.venue}'s form` };
  const quotes = findNativeVenue(source.venue)?.quotes ?? [];
  if (!quotes.includes(split.quote)) return { refused: `market ${symbol}: quote ${split.quote} is not one ${source.venue} follows (${quotes.join(', ')})` };
  const asset = assetIdForVenueTicker(source.venue, split.base) ?? (discover ? discoveredAssetId(source.venue, split.base) : undefined);
  if (!asset) return { refused: `market ${symbol}: the catalog maps no asset to ${split.base} on ${source.venue}` };
  let contractSize = '1';
  if (source.contracts) {
    const size = contracts?.get(symbol);
    if (!size) return { refused: `market ${symbol}: contract size unknown (not in ${source.venue}'s instrument list)` };
    contractSize = size;
  }
  return { venue: source.venue, symbol, asset, quote: split.quote, contractSize };
}
