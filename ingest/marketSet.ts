// The markets one collector follows, from the venue's listing: which are collected (a followed
// quote; a base asset the catalog maps, or any base when discovering) and which bases the catalog
// does not map. Both collectors keep one; a new listing of the venue is applied as what it adds and
// removes.
import type { Logger } from '../infra/log.ts';
import { selectMarkets, type MarketSelection } from './normalize.ts';
import type { MarketListing, VenueDescriptor, VenueMarket } from './venue.ts';

/** What a new listing changed: markets newly followed, and markets no longer listed (no longer followed). */
export interface MarketChange {
  added: VenueMarket[];
  removed: VenueMarket[];
}

export class MarketSet {
  readonly #venue: Pick<VenueDescriptor, 'id' | 'quotes'>;
  readonly #selection: MarketSelection;
  #markets: VenueMarket[] = [];
  #unmapped: string[] = [];
  readonly #bySymbol = new Map<string, VenueMarket>();

  /** `assets`: catalog asset ids to follow (`ingest --assets`); every mapped market when unset; `discover`: unmapped bases too. */
  constructor(venue: Pick<VenueDescriptor, 'id' | 'quotes'>, selection: MarketSelection = {}) {
    this.#venue = venue;
    this.#selection = selection;
  }

  /** The markets followed, in listing order (markets added later come after the others). */
  get markets(): readonly VenueMarket[] {
    return this.#markets;
  }

  /** Venue symbols with a followed quote whose base asset is not in the catalog (collected as discovered assets when discovering). */
  get unmapped(): readonly string[] {
    return this.#unmapped;
  }

  /** The followed market of a venue symbol. */
  get(symbol: string): VenueMarket | undefined {
    return this.#bySymbol.get(symbol);
  }

  has(symbol: string): boolean {
    return this.#bySymbol.has(symbol);
  }

  /**
   * Takes the venue's listing: listed markets not followed yet are added, followed ones no longer
   * listed removed. A market still listed keeps what it was first listed with.
   */
  apply(listings: readonly MarketListing[]): MarketChange {
    const next = selectMarkets(this.#venue, listings, this.#selection);
    const listed = new Set(next.markets.map((m) => m.symbol));
    const added = next.markets.filter((m) => !this.#bySymbol.has(m.symbol));
    const removed = this.#markets.filter((m) => !listed.has(m.symbol));
    this.#unmapped = next.unmapped;
    for (const m of removed) this.#bySymbol.delete(m.symbol);
    for (const m of added) this.#bySymbol.set(m.symbol, m);
    if (added.length > 0 || removed.length > 0) this.#markets = [...this.#markets.filter((m) => listed.has(m.symbol)), ...added];
    return { added, removed };
  }
}

/** The two lines a collector logs once its markets are first resolved. */
export function logResolved(log: Logger, markets: MarketSet): void {
  const { unmapped } = markets;
  const unmappedSymbols = new Set(unmapped);
  const discovered = markets.markets.filter((m) => unmappedSymbols.has(m.symbol)).length;
  if (discovered > 0) log.info({ count: discovered, sample: unmapped.slice(0, 50) }, 'markets whose base asset is not in the catalog: collected as discovered assets');
  else if (unmapped.length > 0) log.info({ count: unmapped.length, unmapped: unmapped.slice(0, 50) }, 'markets whose base asset is not in the catalog: not collected');
  log.info({ markets: markets.markets.length }, 'markets resolved');
}
