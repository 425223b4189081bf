// The whole market, SIMULATED: thousands of made-up assets listed over the native venues the way the
// real market is shaped, for the service's discovery of every asset a venue lists (issue 25). Most
// assets list on one or two venues and a few on ten or more; most markets trade a few times a minute
// or less and a few carry most of the trades; some tickers are shared by two different assets on
// different venues, some listings are per 1000 units; a few markets list or delist while running.
// Pure and deterministic by seed: simulator/liveUniverse.ts serves it. No asset here is real.
import { assetIdForVenueTicker } from '../infra/catalog/catalog.ts';
import { seededRandom, simulatedTickers, type ListingFormat, type ListingSpec } from './market.ts';

export interface UniverseOptions {
  /** Synthetic assets, the ones sharing a ticker with another included (default 2,000: about 7,000 markets on the 15 venues). */
  assets?: number;
  /** One scheduled listing (a market or a brand-new asset's) every this many ms after start (default 30 s). */
  listingsEveryMs?: number;
  /** One scheduled delisting every this many ms after start (default 120 s). */
  delistingsEveryMs?: number;
  /** Every synthetic market's trade rate times this (default 1: about 600 trades a second in all at full size). */
  tradesPerSecondScale?: number;
}

export const universeDefaults: Required<UniverseOptions> = { assets: 2_000, listingsEveryMs: 30_000, delistingsEveryMs: 120_000, tradesPerSecondScale: 1 };

/** A made-up asset: `key` is its identity (tickers repeat, keys never do). */
export interface SyntheticAsset {
  key: string;
  ticker: string;
  name: string;
  startPrice: number;
}

export type UniverseMarketKind = 'plain' | 'shared-ticker' | 'scaled';

export interface UniverseMarket {
  venue: string;
  /** As the venue's format writes it; `asset` is the model's key of the asset behind it. */
  spec: ListingSpec;
  /** The asset's identity: a synthetic asset's key, or the catalog id for a catalog asset's scaled listing. */
  assetKey: string;
  /** Units of the asset per listed unit (1000 for 1000XYZUSDT). */
  unit: number;
  tradesPerSecond: number;
  /** When it lists, in ms after start (0: at start). */
  listAt: number;
  /** When it delists, in ms after start, for the few that do. */
  delistAt?: number;
  kind: UniverseMarketKind;
}

export interface Universe {
  assets: SyntheticAsset[];
  markets: UniverseMarket[];
}

/** The market's shape: tuned so that about 60% of the markets trade under 2 a minute, the top 5% carry about 60% of the trades. */
const shape = {
  /** Pareto index of an asset's popularity: its venue count is floor(popularity), at most every venue. */
  popularityIndex: 1,
  /** A market's rate: base x Pareto(marketIndex) x popularity^popularityWeight, capped (trades per second). */
  baseRate: 1 / 240,
  marketIndex: 0.9,
  popularityWeight: 0.3,
  maxRate: 4,
  /** Chance that an asset also lists in each of a venue's other quotes. */
  extraQuote: 0.15,
  /** Prices log-uniform over this range (USD). */
  minPrice: 1e-8,
  maxPrice: 1e4,
  /** Shares of assets and markets listed late, of markets delisted. */
  lateAssets: 0.03,
  lateMarkets: 0.01,
  delisted: 0.01,
};

/** Catalog assets listed per 1000 on venues that do so in life (Bybit's 1000PEPEUSDT, SHIB1000USDT); Binance's are in its own listing. */
const catalogScaled: readonly { venue: string; ticker: string; unit: number }[] = [
  { venue: 'bybit-linear', ticker: 'PEPE', unit: 1000 },
  { venue: 'bybit-linear', ticker: 'SHIB', unit: 1000 },
];

/** Book levels per side of a synthetic market: the quiet ones' books are small. */
export const levelsFor = (tradesPerSecond: number) => (tradesPerSecond >= 0.5 ? 25 : 10);

const pareto = (random: () => number, index: number) => (1 - random()) ** (-1 / index);
const logUniformPrice = (random: () => number) => 10 ** (Math.log10(shape.minPrice) + random() * (Math.log10(shape.maxPrice) - Math.log10(shape.minPrice)));
const marketRate = (random: () => number, popularity: number, scale: number) =>
  Math.min(shape.maxRate, shape.baseRate * pareto(random, shape.marketIndex) * popularity ** shape.popularityWeight) * scale;

const consonants = 'BCDFGHJKLMNPRSTVWZ';
const vowels = 'AEIOUAEIOY';
/** Ticker lengths 2..8, weighted as listed tickers are (mostly 3 to 5). */
const lengthWeights: readonly [number, number][] = [[2, 2], [3, 28], [4, 34], [5, 18], [6, 9], [7, 5], [8, 4]];
const nameSuffixes = [' Protocol', ' Network', ' Finance', ' Coin', ' Token', ' AI', ' Chain', ' Labs', ' Inu', 'swap', ' DAO', ' Games', '', ''];

function pick<T>(random: () => number, items: ArrayLike<T>): T {
  return items[Math.floor(random() * items.length)]!;
}

function weightedLength(random: () => number): number {
  let r = random() * lengthWeights.reduce((sum, [, w]) => sum + w, 0);
  for (const [length, weight] of lengthWeights) if ((r -= weight) < 0) return length;
  return 4;
}

/** Letters alternating consonant and vowel (ZORBA, KEMI), a few ending in a digit (ZOR3). */
function pronounceable(random: () => number): string {
  const length = weightedLength(random);
  let consonantNext = random() < 0.75;
  let out = '';
  while (out.length < length) {
    out += pick(random, consonantNext ? consonants : vowels);
    consonantNext = !consonantNext;
  }
  if (random() < 0.08) out = (out.length < 8 ? out : out.slice(0, 7)) + String(1 + Math.floor(random() * 9));
  return out;
}

/** Tickers a synthetic asset may not take. */
export interface TickerFilter {
  has(ticker: string): boolean;
}

/**
 * No ticker the catalog maps on any of `venues`, no catalog ticker the simulator prices, no quote
 * (nor Kraken's legacy codes): a synthetic ticker never names a real asset.
 */
export function reservedTickers(venues: readonly string[]): TickerFilter {
  const reserved = new Set<string>([...simulatedTickers, 'USD', 'USDT', 'USDC', 'UST', 'EUR', 'XBT', 'XDG']);
  return { has: (t) => reserved.has(t) || venues.some((v) => assetIdForVenueTicker(v, t) !== undefined) };
}

/** Makes fresh tickers and names: never a reserved ticker, never one given out before. */
export class TickerMaker {
  readonly #random: () => number;
  readonly #reserved: TickerFilter;
  readonly taken = new Set<string>();

  constructor(random: () => number, reserved: TickerFilter) {
    this.#random = random;
    this.#reserved = reserved;
  }

  ticker(): string {
    for (;;) {
      const t = pronounceable(this.#random);
      if (t.length >= 2 && !this.taken.has(t) && !this.#reserved.has(t)) {
        this.taken.add(t);
        return t;
      }
    }
  }

  /** A project name on the ticker (Zorba Network), other than `not`. */
  name(ticker: string, not?: string): string {
    for (;;) {
      const stem = ticker.charAt(0) + ticker.slice(1).toLowerCase();
      const extra = this.#random() < 0.4 ? pick(this.#random, ['a', 'ix', 'on', 'ium', 'ex', 'o']) : '';
      const name = `${stem}${extra}${pick(this.#random, nameSuffixes)}`.trim();
      if (name !== not) return name;
    }
  }

  asset(key: string): SyntheticAsset {
    const ticker = this.ticker();
    return { key, ticker, name: this.name(ticker), startPrice: logUniformPrice(this.#random) };
  }
}

/** `count` venues drawn without replacement, each by its appetite. */
function pickVenues(random: () => number, formats: Record<string, ListingFormat>, among: readonly string[], count: number): string[] {
  const left = [...among];
  const out: string[] = [];
  while (out.length < count && left.length > 0) {
    let r = random() * left.reduce((sum, v) => sum + formats[v]!.appetite, 0);
    const found = left.findIndex((v) => (r -= formats[v]!.appetite) < 0);
    // Rounding may leave r a hair above zero after the last: that one it is.
    out.push(left.splice(found === -1 ? left.length - 1 : found, 1)[0]!);
  }
  return out;
}

/** An asset's markets on its venues: each venue's first quote, and now and then its others. */
function listAsset(random: () => number, formats: Record<string, ListingFormat>, asset: SyntheticAsset, venues: readonly string[], popularity: number, scale: number, kind: UniverseMarketKind): UniverseMarket[] {
  return venues.flatMap((venue) => {
    const format = formats[venue]!;
    const quotes = format.quotes.filter((_, i) => i === 0 || random() < shape.extraQuote);
    return quotes.map((quote) => syntheticMarket(venue, format.market(asset.ticker, quote, asset.startPrice), asset.key, 1, marketRate(random, popularity, scale), kind));
  });
}

function syntheticMarket(venue: string, spec: ListingSpec, assetKey: string, unit: number, tradesPerSecond: number, kind: UniverseMarketKind): UniverseMarket {
  return { venue, spec: { ...spec, asset: assetKey, tradesPerSecond, levels: levelsFor(tradesPerSecond) }, assetKey, unit, tradesPerSecond, listAt: 0, kind };
}

/** Shuffles in place (Fisher-Yates) with the universe's random. */
function shuffle<T>(random: () => number, items: T[]): T[] {
  for (let i = items.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [items[i], items[j]] = [items[j]!, items[i]!];
  }
  return items;
}

/**
 * The universe of `seed`: assets and markets over the venues of `formats` (in their order), with
 * the schedule of late listings and delistings. Same seed, same options, same universe.
 */
export function generateUniverse(seed: number, formats: Record<string, ListingFormat>, options: UniverseOptions = {}): Universe {
  const o = { ...universeDefaults, ...options };
  const random = seededRandom(seed ^ 0x51a7e);
  const venues = Object.keys(formats);
  const maker = new TickerMaker(random, reservedTickers(venues));
  const sharedCount = Math.max(2, Math.round(o.assets * 0.018));
  const scaledCount = Math.max(2, Math.round(o.assets * 0.005));
  const assets: SyntheticAsset[] = [];
  const markets: UniverseMarket[] = [];

  for (let i = 0; i < o.assets - sharedCount; i++) {
    const asset = maker.asset(`sim:${i}`);
    const popularity = pareto(random, shape.popularityIndex);
    assets.push(asset);
    markets.push(...listAsset(random, formats, asset, pickVenues(random, formats, venues, Math.min(venues.length, Math.floor(popularity))), popularity, o.tradesPerSecondScale, 'plain'));
  }
  const special = new Set<string>();
  scaleSome(random, formats, assets, markets, scaledCount, o.tradesPerSecondScale, special);
  markets.push(...catalogScaledMarkets(formats, o.tradesPerSecondScale));
  for (let j = 0; j < sharedCount; j++) {
    const partner = shareTicker(random, formats, maker, assets, markets, `sim:${o.assets - sharedCount + j}`, o.tradesPerSecondScale, special);
    if (partner) assets.push(partner);
  }
  schedule(random, assets, markets, special, o);
  return { assets, markets };
}

/**
 * Lists `count` tiny-priced assets per `unit` on the venues that do so (1000XYZUSDT, and
 * 1000000XYZUSDT under a millionth of a dollar), in place of their plain market there, and on a
 * spot venue too when they had none, so the same asset is seen both ways.
 */
function scaleSome(random: () => number, formats: Record<string, ListingFormat>, assets: SyntheticAsset[], markets: UniverseMarket[], count: number, scale: number, special: Set<string>): void {
  const scaling = Object.keys(formats).filter((v) => formats[v]!.scaled);
  const isSpot = (v: string) => !formats[v]!.market('X', formats[v]!.quotes[0]!, 1).perpetual;
  const spot = Object.keys(formats).filter(isSpot);
  const candidates = shuffle(random, assets.filter((a) => a.startPrice < 1e-3));
  for (const asset of candidates.slice(0, count)) {
    special.add(asset.key);
    const popularity = 2;
    const own = markets.filter((m) => m.assetKey === asset.key);
    const venues = scaling.filter((_, i) => i === 0 || random() < 0.6);
    for (const venue of venues) {
      const plain = own.filter((m) => m.venue === venue);
      for (const m of plain) markets.splice(markets.indexOf(m), 1);
      const unit = asset.startPrice < 1e-6 ? 1_000_000 : 1_000;
      markets.push(syntheticMarket(venue, formats[venue]!.scaled!(asset.ticker, unit), asset.key, unit, marketRate(random, popularity, scale), 'scaled'));
    }
    if (!own.some((m) => spot.includes(m.venue))) markets.push(...listAsset(random, formats, asset, [pick(random, spot)], popularity, scale, 'plain'));
  }
}

function catalogScaledMarkets(formats: Record<string, ListingFormat>, scale: number): UniverseMarket[] {
  return catalogScaled
    .filter(({ venue }) => formats[venue]?.scaled)
    .map(({ venue, ticker, unit }) => {
      const tradesPerSecond = 0.5 * scale;
      const spec = { ...formats[venue]!.scaled!(ticker, unit), asset: ticker, tradesPerSecond, levels: levelsFor(tradesPerSecond) };
      return { venue, spec, assetKey: assetIdForVenueTicker(venue, ticker) ?? ticker, unit, tradesPerSecond, listAt: 0, kind: 'scaled' as const };
    });
}

/**
 * A second asset with the ticker of an existing one, listed only on venues the first is not on,
 * priced 10 to 1000 times apart: two projects, one ticker, as happens across venues.
 */
function shareTicker(random: () => number, formats: Record<string, ListingFormat>, maker: TickerMaker, assets: SyntheticAsset[], markets: UniverseMarket[], key: string, scale: number, special: Set<string>): SyntheticAsset | undefined {
  const venues = Object.keys(formats);
  for (let attempt = 0; attempt < 50; attempt++) {
    const first = pick(random, assets);
    if (special.has(first.key)) continue;
    const taken = new Set(markets.filter((m) => m.assetKey === first.key).map((m) => m.venue));
    const free = venues.filter((v) => !taken.has(v));
    if (taken.size === 0 || free.length === 0) continue;
    const factor = 10 ** ((1 + 2 * random()) * (random() < 0.5 ? -1 : 1));
    const price = first.startPrice * factor >= shape.minPrice && first.startPrice * factor <= shape.maxPrice ? first.startPrice * factor : first.startPrice / factor;
    const partner: SyntheticAsset = { key, ticker: first.ticker, name: maker.name(first.ticker, first.name), startPrice: price };
    special.add(first.key).add(key);
    const popularity = 1 + 2 * random();
    const own = pickVenues(random, formats, free, 1 + Math.floor(random() * Math.min(3, free.length)));
    markets.push(...listAsset(random, formats, partner, own, popularity, scale, 'shared-ticker'));
    for (const m of markets) if (m.assetKey === first.key) m.kind = 'shared-ticker';
    return partner;
  }
  return undefined;
}

/**
 * The schedule: every market of a few assets (brand-new listings) and a few other markets list one
 * after another, one every `listingsEveryMs`; a few markets listed at start delist, one every
 * `delistingsEveryMs`. The assets of the shared tickers and of the scaled listings stay put, every
 * market of theirs.
 */
function schedule(random: () => number, assets: SyntheticAsset[], markets: UniverseMarket[], special: Set<string>, o: Required<UniverseOptions>): void {
  const ordinary = assets.filter((a) => !special.has(a.key));
  const newAssets = new Set(shuffle(random, [...ordinary]).slice(0, Math.round(ordinary.length * shape.lateAssets)).map((a) => a.key));
  const plain = markets.filter((m) => m.kind === 'plain' && m.assetKey.startsWith('sim:') && !special.has(m.assetKey));
  const late = plain.filter((m) => newAssets.has(m.assetKey) || random() < shape.lateMarkets);
  shuffle(random, late).forEach((m, i) => (m.listAt = (i + 1) * o.listingsEveryMs));
  const atStart = plain.filter((m) => m.listAt === 0);
  shuffle(random, atStart)
    .slice(0, Math.round(plain.length * shape.delisted))
    .forEach((m, i) => (m.delistAt = (i + 1) * o.delistingsEveryMs));
}
