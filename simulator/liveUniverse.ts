// The universe (simulator/universe.ts) served by a running simulator: its assets priced by the one
// market model, its markets listed on the running venues at start or on schedule and delisted on
// schedule, brand-new listings on command for tests, and the truth behind every listed market.
import { assetIdForVenueTicker } from '../infra/catalog/catalog.ts';
import { seededRandom, type ListingFormat, type MarketModel, type VenueListing } from './market.ts';
import { levelsFor, reservedTickers, TickerMaker, type SyntheticAsset, type Universe, type UniverseMarket } from './universe.ts';

/** What a listed market really is. */
export interface MarketTruth {
  /** The asset's identity: a synthetic asset's key (sim:42), or a catalog asset's catalog id (bitcoin). */
  assetKey: string;
  /** Units of the asset per listed unit: 1000 for 1000XYZUSDT, 1 for most. */
  unit: number;
  synthetic: boolean;
}

export interface ListNowOptions {
  /** Trades per second of the new market (default 1: a test sees it trade soon). */
  tradesPerSecond?: number;
  /** Its quote (default the venue's first). */
  quote?: string;
  /** An existing synthetic asset's key: lists that asset on one more venue instead of a brand-new asset. */
  asset?: string;
  /** A brand-new asset under this ticker: a venue giving a ticker it delisted to another asset. */
  ticker?: string;
}

export interface ListedMarket {
  asset: SyntheticAsset;
  venue: string;
  symbol: string;
  tradesPerSecond: number;
}

/** `Simulator.universe`: the ground truth a test checks the service's discovery against, and listings on command. */
export interface SimulatorUniverse {
  /** Every synthetic asset: the generated ones (listed yet or not) and those `listNow` made. */
  readonly assets: readonly SyntheticAsset[];
  /** Every synthetic or scaled market of the plan and of `listNow`, on every venue (running or not), with its schedule. */
  readonly markets: readonly UniverseMarket[];
  /** The asset behind a market a running venue lists or listed (catalog markets too); undefined for one it never listed. */
  truth(venue: string, symbol: string): MarketTruth | undefined;
  /** Lists a brand-new synthetic asset (or `options.asset`) on `venue` now: on its listing endpoint at once, trading from the next tick. */
  listNow(venue: string, options?: ListNowOptions): ListedMarket;
  /** Delists a market now: gone from the listing endpoint, no more trades. */
  delistNow(venue: string, symbol: string): void;
}

const byListAt = (a: UniverseMarket, b: UniverseMarket) => a.listAt - b.listAt;
const byDelistAt = (a: UniverseMarket, b: UniverseMarket) => a.delistAt! - b.delistAt!;

export class LiveUniverse implements SimulatorUniverse {
  readonly #assets: SyntheticAsset[];
  readonly #markets: UniverseMarket[];
  readonly #model: MarketModel;
  readonly #listings: ReadonlyMap<string, VenueListing>;
  readonly #formats: Readonly<Record<string, ListingFormat>>;
  /** Venue -> symbol -> truth, for every universe market listed so far (delisted ones stay). */
  readonly #truth = new Map<string, Map<string, MarketTruth>>();
  /** Scheduled listings and delistings of running venues, in time order, and how far each has gone. */
  readonly #toList: UniverseMarket[];
  readonly #toDelist: UniverseMarket[];
  #listed = 0;
  #delisted = 0;
  readonly #maker: TickerMaker;
  readonly #random: () => number;

  constructor(universe: Universe, seed: number, model: MarketModel, listings: ReadonlyMap<string, VenueListing>, formats: Readonly<Record<string, ListingFormat>>) {
    this.#assets = [...universe.assets];
    this.#markets = [...universe.markets];
    this.#model = model;
    this.#listings = listings;
    this.#formats = formats;
    this.#random = seededRandom(seed ^ 0x11570);
    this.#maker = new TickerMaker(this.#random, reservedTickers(Object.keys(formats)));
    for (const a of universe.assets) {
      this.#maker.taken.add(a.ticker);
      model.addAsset(a.key, a);
    }
    const running = universe.markets.filter((m) => listings.has(m.venue));
    for (const m of running) if (m.listAt === 0) this.#list(m);
    this.#toList = running.filter((m) => m.listAt > 0).sort(byListAt);
    this.#toDelist = running.filter((m) => m.delistAt !== undefined).sort(byDelistAt);
  }

  get assets(): readonly SyntheticAsset[] {
    return this.#assets;
  }

  get markets(): readonly UniverseMarket[] {
    return this.#markets;
  }

  /** Lists and delists what the schedule says is due `elapsedMs` after start. */
  advance(elapsedMs: number): void {
    for (; this.#listed < this.#toList.length && this.#toList[this.#listed]!.listAt <= elapsedMs; this.#listed++) this.#list(this.#toList[this.#listed]!);
    for (; this.#delisted < this.#toDelist.length && this.#toDelist[this.#delisted]!.delistAt! <= elapsedMs; this.#delisted++) {
      const m = this.#toDelist[this.#delisted]!;
      this.delistNow(m.venue, m.spec.symbol);
    }
  }

  truth(venue: string, symbol: string): MarketTruth | undefined {
    const known = this.#truth.get(venue)?.get(symbol);
    if (known) return known;
    const m = this.#listings.get(venue)?.bySymbol.get(symbol);
    if (!m) return undefined;
    return { assetKey: assetIdForVenueTicker(venue, m.asset) ?? assetIdForVenueTicker(venue, m.base) ?? m.asset, unit: m.unit, synthetic: false };
  }

  listNow(venue: string, options: ListNowOptions = {}): ListedMarket {
    const listing = this.#listings.get(venue);
    const format = this.#formats[venue];
    if (!listing || !format) throw new Error(`simulator: venue ${venue} is not running`);
    const asset = options.asset === undefined ? this.#newAsset(options.ticker) : this.#assets.find((a) => a.key === options.asset);
    if (!asset) throw new Error(`simulator: no synthetic asset ${options.asset}`);
    const tradesPerSecond = options.tradesPerSecond ?? 1;
    const spec = format.market(asset.ticker, options.quote ?? format.quotes[0]!, asset.startPrice);
    const market: UniverseMarket = {
      venue,
      spec: { ...spec, asset: asset.key, tradesPerSecond, levels: levelsFor(tradesPerSecond) },
      assetKey: asset.key,
      unit: 1,
      tradesPerSecond,
      listAt: 0,
      kind: 'plain',
    };
    this.#list(market);
    this.#markets.push(market);
    return { asset, venue, symbol: spec.symbol, tradesPerSecond };
  }

  delistNow(venue: string, symbol: string): void {
    this.#listings.get(venue)?.remove(symbol);
  }

  #newAsset(ticker?: string): SyntheticAsset {
    const made = this.#maker.asset(`sim:listed:${this.#assets.length}`);
    const asset = ticker === undefined ? made : { ...made, ticker, name: this.#maker.name(ticker) };
    this.#model.addAsset(asset.key, asset);
    this.#assets.push(asset);
    return asset;
  }

  #list(m: UniverseMarket): void {
    this.#listings.get(m.venue)!.add(m.spec);
    let venue = this.#truth.get(m.venue);
    if (!venue) this.#truth.set(m.venue, (venue = new Map()));
    venue.set(m.spec.symbol, { assetKey: m.assetKey, unit: m.unit, synthetic: m.assetKey.startsWith('sim:') });
  }
}
