// The markets one collector follows, from the venue's listing: which are collected (a followed
// quote, a base asset the catalog maps) and which are listed but unmapped. Both collectors keep one;
// a new listing of the venue is applied as what it adds and removes. Discovering the assets the
// catalog does not map (the "whole market" issue) belongs here: it decides which listings become
// markets.
import type { Logger } from '../infra/log.ts';
import { selectMarkets } from './normalize.ts';
import type { MarketListing, VenueDescriptor, VenueMarket } from './venue.ts';

/** What a new listing changed: markets newly followed, and markets no longer listed (no longer followed). */
export interface MarketChange {
  added: VenueMarket[];
  removed: VenueMarket[];
}

export class MarketSet {
  readonly #venue: Pick<VenueDescriptor, 'id' | 'quotes'>;
  readonly #assets: ReadonlySet<string> | undefined;
  #markets: VenueMarket[] = [];
  #unmapped: string[] = [];
  readonly #bySymbol = new Map<string, VenueMarket>();

  /** `assets`: catalog asset ids to follow (`ingest --assets`); every mapped market when unset. */
  constructor(venue: Pick<VenueDescriptor, 'id' | 'quotes'>, assets?: ReadonlySet<string>) {
    this.#venue = venue;
    this.#assets = assets;
  }

  /** The markets followed, in listing order (markets added later come after the others). */
  get markets(): readonly VenueMarket[] {
    return this.#markets;
  }

  /** Venue symbols with a followed quote whose base asset is not in the catalog. */
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
    const next = selectMarkets(this.#venue, listings, this.#assets);
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
  if (unmapped.length > 0) log.info({ count: unmapped.length, unmapped: unmapped.slice(0, 50) }, 'markets whose base asset is not in the catalog: not collected');
  log.info({ markets: markets.markets.length }, 'markets resolved');
}
