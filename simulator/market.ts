// The market model behind the simulator: SIMULATED prices, trades, books and liquidations, never
// market data. One seeded reference price per asset moves for every venue at once; each venue
// lists its own markets around it (its own bias, trades, books and ids), so cross-venue prices
// agree up to the configured biases, as on real venues. Markets with a rate of their own (the
// universe's long tail, simulator/universe.ts) trade on a schedule and move only when they trade.
import { assetIdForVenueTicker, findAsset } from '../infra/catalog/catalog.ts';
import { keccak256, stringToHex } from 'viem';
import { TradeSchedule } from './tradeSchedule.ts';

/** Simulator-only starting points: rough magnitudes so the demo looks plausible, nothing more. */
const startPrices: Record<string, number> = {
  BTC: 90_000, ETH: 3_000, BNB: 600, SOL: 150, XRP: 0.6, DOGE: 0.15, ADA: 0.45, TRX: 0.12, AVAX: 30,
  LINK: 15, DOT: 6, TON: 5, SHIB: 0.00002, LTC: 80, BCH: 400, NEAR: 5, UNI: 8, APT: 9, ICP: 10,
  ETC: 25, XLM: 0.1, FIL: 5, ATOM: 8, ARB: 0.9, OP: 2, SUI: 1.5, HBAR: 0.08, INJ: 25, RENDER: 7,
  AAVE: 150, ALGO: 0.18, PEPE: 0.00001, MKR: 2_000, GRT: 0.2,
};

/**
 * A market's trade numbers start above this: the demo's SIMULATED history (simulator/archiveFiles.ts)
 * numbers its trades just below the first live one, and needs room there.
 */
export const firstTradeIdFloor = 1_000_001;

/** Tickers the simulator prices (the catalog's non-stablecoin assets). */
export const simulatedTickers = Object.keys(startPrices);

/**
 * The SIMULATED token contract of a made-up asset: an address derived from its key, the same on
 * every run, which the simulated KuCoin lists (a simulated EVM chain answers for it only when it is
 * given as one of its tokens: the demo's chain is not).
 */
export function simulatedContract(key: string): string {
  return `0x${keccak256(stringToHex(`simulated:token:${key}`)).slice(-40)}`;
}

/** mulberry32: small, fast, good enough for a simulation, and seedable. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function hash(text: string): number {
  let h = 2166136261;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 16777619);
  return h >>> 0;
}

function gaussian(random: () => number): number {
  const u = 1 - random();
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * random());
}

/** Poisson count by inversion (small means only). */
function poisson(random: () => number, mean: number): number {
  const limit = Math.exp(-mean);
  let k = 0;
  for (let p = random(); p > limit; p *= random()) k++;
  return k;
}

/** Waiting time to the next arrival of a Poisson process of `perSecond` (ms). */
function exponentialWaitMs(random: () => number, perSecond: number): number {
  return (-Math.log(1 - random()) / perSecond) * 1000;
}

/** The reference price of one asset, shared by every venue. */
export interface SimAsset {
  ticker: string;
  /** The full name venues publish with the ticker (Gate's base_name, Coinbase's base_name). */
  name: string;
  /** A made-up asset's token contract (simulatedContract), which KuCoin's currency list publishes; none for the catalog's. */
  contract?: string;
  mid: number;
  volatility: number;
  /**
   * The model clock (ms) the mid was last moved to, for an asset moved only when read (the
   * universe's, most of which trade rarely); undefined for one moved every tick.
   */
  movedAt?: number;
}

/** The name venues publish with a catalog ticker: the catalog's; US Dollar for USD. */
function catalogName(ticker: string): string {
  if (ticker === 'USD') return 'US Dollar';
  const id = assetIdForVenueTicker('binance', ticker);
  return (id === undefined ? undefined : findAsset(id)?.name) ?? ticker;
}

/** How a venue lists a market. */
export interface ListingSpec {
  symbol: string;
  base: string;
  quote: string;
  /** Base units per contract when the venue counts in contracts (OKX swaps); 1 otherwise. */
  contractSize?: number;
  /** Base units per unit of the listed base, for markets like 1000PEPEUSDT (priced per 1000 PEPE); 1 otherwise. */
  unit?: number;
  perpetual?: boolean;
  /** Inverse contracts (BitMEX XBTUSD): quantities in contracts of `contractSize` quote units each. */
  inverse?: boolean;
  /** The simulated asset, where the venue's ticker differs (BitMEX's XBT is BTC). */
  asset?: string;
  /**
   * Trades per second of this market alone: it trades on its own schedule and its book moves only
   * when it trades (the universe's long tail). Without it, the model's uniform rate, every tick.
   */
  tradesPerSecond?: number;
  /** Book levels per side (default 50): the tail's books are small. */
  levels?: number;
}

/**
 * How a venue writes its markets, for assets the simulator makes up (simulator/universe.ts): each
 * venue's file says it, beside the listing of its catalog markets it is also used for.
 */
export interface ListingFormat {
  /** The quotes an asset lists in on this venue: the first always, the others sometimes. */
  quotes: readonly string[];
  /** Relative chance that an asset of the long tail lists here (Gate and KuCoin list the most, Deribit few). */
  appetite: number;
  /** The venue's market of `base` in `quote`; `price`, the asset's, where the venue sizes contracts by it (OKX). */
  market(base: string, quote: string, price?: number): ListingSpec;
  /** A market priced per `unit` of the asset (1000PEPEUSDT), on venues that list tiny-priced assets that way. */
  scaled?(base: string, unit: number): ListingSpec;
}

export interface SimMarket {
  venue: string;
  symbol: string;
  base: string;
  quote: string;
  perpetual: boolean;
  inverse: boolean;
  /** The simulated asset behind the listed base (PEPE behind 1000PEPE) and how many of it one listed unit is. */
  asset: string;
  unit: number;
  /** Base units per quantity unit, and as the decimal string the venue publishes. */
  contractSize: number;
  contractSizeText: string;
  priceDecimals: number;
  /** Decimals of the venue's quantity unit (base units, or contracts). */
  qtyDecimals: number;
  tick: number;
  nextTradeId: number;
  /** Last update id of the book: every level change advances it by one. */
  updateId: number;
  /** Price -> quantity, decimal strings in the venue's units. */
  bids: Map<string, string>;
  asks: Map<string, string>;
  /** Book levels per side. */
  levels: number;
  /** The market's own rate (see ListingSpec), and when its next trade is due (NaN until scheduled). */
  tradesPerSecond?: number;
  nextTradeAt: number;
  /** The full names of base and quote, as venues that publish names write them. */
  baseName: string;
  quoteName: string;
  /** The base's token contract, for a made-up base (KuCoin's currency list publishes it as an ERC20 chain). */
  baseContract?: string;
}

export interface SimTrade {
  venue: string;
  symbol: string;
  base: string;
  quote: string;
  id: number;
  /** Decimal strings, as the venue sends them; `qty` in the venue's unit (contracts where it counts in them). */
  price: string;
  qty: string;
  /** Taker side. */
  side: 'buy' | 'sell';
  time: number;
}

export interface SimLiquidation {
  venue: string;
  symbol: string;
  base: string;
  quote: string;
  /** The position that was closed. */
  positionSide: 'long' | 'short';
  price: string;
  qty: string;
  time: number;
}

/** Book changes of one step: [price, qty] strings, "0" removes a level. */
export interface BookDiff {
  firstUpdateId: number;
  finalUpdateId: number;
  bids: [string, string][];
  asks: [string, string][];
}

export interface MarketStep {
  trades: SimTrade[];
  liquidations: SimLiquidation[];
  diff: BookDiff;
}

const levelsPerSide = 50;
/** Share of a scheduled perpetual market's trades that come with a liquidation. */
const scheduledLiquidationShare = 0.05;

export interface ModelOptions {
  tradesPerSecondPerMarket: number;
  /** Liquidations per second per perpetual market. */
  liquidationsPerSecondPerMarket?: number;
}

export class MarketModel {
  /** By key: the ticker for the catalog's assets, the universe's own key for its (tickers may repeat there). */
  readonly assets = new Map<string, SimAsset>();
  readonly #random: () => number;
  /** Moves of the assets moved only when read: a stream of their own, so the others' do not depend on reads. */
  readonly #lazyRandom: () => number;
  readonly #seed: number;
  /** Model time (ms): the sum of every advance. */
  #clock = 0;
  readonly #everyTick: SimAsset[] = [];
  readonly options: Required<ModelOptions>;

  constructor(seed: number, options: ModelOptions) {
    this.#seed = seed;
    this.#random = seededRandom(seed);
    this.#lazyRandom = seededRandom(seed ^ 0x1a2b3c4d);
    this.options = { liquidationsPerSecondPerMarket: 0.5, ...options };
    for (const ticker of simulatedTickers) {
      const asset = { ticker, name: catalogName(ticker), mid: startPrices[ticker]!, volatility: 0.0004 + this.#random() * 0.0006 };
      this.assets.set(ticker, asset);
      this.#everyTick.push(asset);
    }
  }

  /**
   * Adds an asset under `key` whose price moves only when it is read, by the whole time since it
   * was last read (a random walk's step over dt is one draw of sqrt(dt) scale): an asset that does
   * not trade costs nothing per tick.
   */
  addAsset(key: string, asset: { ticker: string; name: string; startPrice: number }): void {
    if (this.assets.has(key)) throw new Error(`simulator: asset ${key} exists`);
    const volatility = 0.0004 + this.#lazyRandom() * 0.0008;
    this.assets.set(key, { ticker: asset.ticker, name: asset.name, contract: simulatedContract(key), mid: asset.startPrice, volatility, movedAt: this.#clock });
  }

  /** The token contract of an asset (by key), for the assets the simulator makes up. */
  contract(key: string): string | undefined {
    return this.assets.get(key)?.contract;
  }

  /** The full name of an asset (by key), or of a catalog ticker. */
  name(key: string): string {
    return this.assets.get(key)?.name ?? catalogName(key);
  }

  /** Moves every reference price over `dtMs` (those moved when read, when next read). */
  advance(dtMs: number): void {
    if (dtMs <= 0) return;
    this.#clock += dtMs;
    for (const a of this.#everyTick) a.mid *= Math.exp(a.volatility * Math.sqrt(dtMs / 1000) * gaussian(this.#random));
  }

  #mid(key: string): number | undefined {
    const a = this.assets.get(key);
    if (a?.movedAt !== undefined && a.movedAt < this.#clock) {
      a.mid *= Math.exp(a.volatility * Math.sqrt((this.#clock - a.movedAt) / 1000) * gaussian(this.#lazyRandom));
      a.movedAt = this.#clock;
    }
    return a?.mid;
  }

  /** The reference price of base in quote (quotes other than USD stablecoins are assets too). */
  reference(base: string, quote: string): number {
    const b = this.#mid(base);
    if (b === undefined) throw new Error(`simulator: no reference price for ${base}`);
    if (quote === 'USD' || quote === 'USDT' || quote === 'USDC') return b;
    const q = this.#mid(quote);
    if (q === undefined) throw new Error(`simulator: no reference price for ${quote}`);
    return b / q;
  }

  /** A venue's markets, priced at the reference times (1 + biasBps / 10,000). */
  listing(venue: string, specs: readonly ListingSpec[], biasBps = 0): VenueListing {
    return new VenueListing(this, venue, specs, biasBps, seededRandom(this.#seed ^ hash(venue)));
  }
}

/** One side's grid levels below the best (`prices`, also as a set), and the grid line they hang from. */
interface GridLevels {
  first: number;
  prices: string[];
  priceSet: ReadonlySet<string>;
}

export class VenueListing {
  readonly venue: string;
  /** Every market listed now, in listing order. */
  readonly markets: SimMarket[];
  /** The same markets by symbol, kept as markets list and delist: what a protocol looks requests up in. */
  readonly bySymbol = new Map<string, SimMarket>();
  readonly #model: MarketModel;
  readonly #bias: number;
  readonly #random: () => number;
  /** Per market and side, the grid levels below the best and the grid line they hang from. */
  readonly #grids = new Map<SimMarket, { bid?: GridLevels; ask?: GridLevels }>();
  /** Markets at the model's uniform rate: stepped every tick. */
  readonly #everyTick = new Set<SimMarket>();
  /** Markets with a rate of their own, by next trade: stepped only when one is due. */
  readonly #schedule = new TradeSchedule<SimMarket>();
  /** Listed since the last `steps`: their first trade is drawn from the next window's start. */
  #unscheduled: SimMarket[] = [];
  readonly #listListeners = new Set<(m: SimMarket) => void>();

  constructor(model: MarketModel, venue: string, specs: readonly ListingSpec[], biasBps: number, random: () => number) {
    this.venue = venue;
    this.#model = model;
    this.#bias = 1 + biasBps / 10_000;
    this.#random = random;
    this.markets = specs.map((s) => this.#market(s));
    for (const m of this.markets) this.#register(m);
    for (const m of this.markets) this.#moveBook(m);
  }

  /**
   * The currencies of the markets listed now, bases and quotes, in the order first listed: each
   * one's full name and, for a made-up base, its SIMULATED token contract (a venue's currency list).
   */
  currencies(): Map<string, { name: string; contract?: string }> {
    const out = new Map<string, { name: string; contract?: string }>();
    for (const m of this.markets) {
      const contract = m.baseContract ?? out.get(m.base)?.contract;
      out.set(m.base, { name: m.baseName, ...(contract ? { contract } : {}) });
      if (!out.has(m.quote)) out.set(m.quote, { name: m.quoteName });
    }
    return out;
  }

  /** Lists a new market while running (a venue listing: the collectors' market refresh, the universe's listings). */
  add(spec: ListingSpec): SimMarket {
    const m = this.#market(spec);
    this.markets.push(m);
    this.#register(m);
    this.#moveBook(m);
    for (const listener of this.#listListeners) listener(m);
    return m;
  }

  /** Calls `listener` with each market listed from now on, its book as first published; returns the remover. */
  onList(listener: (m: SimMarket) => void): () => void {
    this.#listListeners.add(listener);
    return () => void this.#listListeners.delete(listener);
  }

  #register(m: SimMarket): void {
    if (this.bySymbol.has(m.symbol)) throw new Error(`simulator: ${this.venue} already lists ${m.symbol}`);
    if (m.tradesPerSecond !== undefined && !(m.tradesPerSecond > 0 && Number.isFinite(m.tradesPerSecond))) {
      throw new RangeError(`simulator: ${m.symbol}'s trades per second must be positive and finite, got ${m.tradesPerSecond}`);
    }
    this.bySymbol.set(m.symbol, m);
    if (m.tradesPerSecond === undefined) this.#everyTick.add(m);
    else this.#unscheduled.push(m);
  }

  /** Delists a market: the venue stops listing and publishing it. */
  remove(symbol: string): void {
    const m = this.bySymbol.get(symbol);
    if (!m) return;
    this.markets.splice(this.markets.indexOf(m), 1);
    this.bySymbol.delete(symbol);
    this.#everyTick.delete(m);
    this.#grids.delete(m);
    // A scheduled market leaves the schedule when it next comes due (see `steps`).
  }

  mid(m: SimMarket): number {
    return this.#model.reference(m.asset, m.quote) * m.unit * this.#bias;
  }

  #market(spec: ListingSpec): SimMarket {
    const unit = spec.unit ?? 1;
    const asset = spec.asset ?? (unit === 1 ? spec.base : spec.base.replace(String(unit), ''));
    const mid = this.#model.reference(asset, spec.quote) * unit;
    const contractSize = spec.contractSize ?? 1;
    // About 6 significant digits of price, like most venue tick sizes.
    const priceDecimals = Math.max(2, Math.min(10, 5 - Math.floor(Math.log10(mid))));
    const inverse = spec.inverse ?? false;
    const contract = this.#model.contract(asset);
    const qtyDecimals = contractSize === 1 && !inverse ? Math.max(0, Math.min(8, Math.floor(Math.log10(mid)) + 2)) : 0;
    return {
      venue: this.venue,
      symbol: spec.symbol,
      base: spec.base,
      quote: spec.quote,
      perpetual: spec.perpetual ?? false,
      inverse,
      asset,
      unit,
      contractSize,
      contractSizeText: String(contractSize),
      priceDecimals,
      qtyDecimals,
      tick: 10 ** -priceDecimals,
      nextTradeId: firstTradeIdFloor + Math.floor(this.#random() * 1e6),
      updateId: 1_000 + Math.floor(this.#random() * 1e6),
      bids: new Map(),
      asks: new Map(),
      levels: spec.levels ?? levelsPerSide,
      ...(spec.tradesPerSecond === undefined ? {} : { tradesPerSecond: spec.tradesPerSecond }),
      nextTradeAt: Number.NaN,
      baseName: this.#model.name(asset),
      quoteName: this.#model.name(spec.quote),
      ...(contract === undefined ? {} : { baseContract: contract }),
    };
  }

  /** A quantity worth about `notional` in the venue's unit: at least one unit of its last decimal. */
  #qty(m: SimMarket, notional: number, price: number): string {
    const units = m.inverse ? notional / m.contractSize : notional / price / m.contractSize;
    return Math.max(10 ** -m.qtyDecimals, units).toFixed(m.qtyDecimals);
  }

  /**
   * The markets that move over the window [from, to] (unix ms), each with its step: every market at
   * the uniform rate, and of those with a rate of their own only the ones with a trade due, so an
   * idle market costs nothing here.
   */
  *steps(from: number, to: number): Generator<[SimMarket, MarketStep]> {
    for (const m of this.#everyTick) yield [m, this.step(m, from, to)];
    for (const m of this.#unscheduled.splice(0)) {
      if (!(m.nextTradeAt >= from)) m.nextTradeAt = from + exponentialWaitMs(this.#random, m.tradesPerSecond!);
      this.#schedule.push(m);
    }
    for (let m = this.#schedule.peek(); m !== undefined && m.nextTradeAt <= to; m = this.#schedule.peek()) {
      this.#schedule.pop();
      if (this.bySymbol.get(m.symbol) !== m) continue; // delisted
      const step = this.step(m, from, to);
      this.#schedule.push(m);
      yield [m, step];
    }
  }

  /** Trade times of a scheduled market in [from, to]; a trade due before the window (a pause) is drawn again from its start. */
  #scheduledTimes(m: SimMarket, perSecond: number, from: number, to: number): number[] {
    if (!(m.nextTradeAt > from - 1)) m.nextTradeAt = from + exponentialWaitMs(this.#random, perSecond);
    const times: number[] = [];
    for (; m.nextTradeAt <= to; m.nextTradeAt += exponentialWaitMs(this.#random, perSecond)) times.push(Math.ceil(m.nextTradeAt));
    return times;
  }

  /** Advances one market from `from` to `to`: trades and liquidations in that window (time order), then the book change. */
  step(m: SimMarket, from: number, to: number): MarketStep {
    const mid = this.mid(m);
    const { tradesPerSecondPerMarket, liquidationsPerSecondPerMarket } = this.#model.options;
    const times = (perSecond: number) =>
      Array.from({ length: poisson(this.#random, (perSecond * (to - from)) / 1000) }, () => from + Math.floor(this.#random() * (to - from + 1))).sort(
        (a, b) => a - b,
      );
    const own = m.tradesPerSecond;
    const trades = (own === undefined ? times(tradesPerSecondPerMarket) : this.#scheduledTimes(m, own, from, to)).map((time): SimTrade => {
      const side = this.#random() < 0.5 ? 'sell' : 'buy';
      // The taker lifts the ask or hits the bid, a tick or a few away from the mid.
      const away = (1 + Math.floor(this.#random() * 3)) * m.tick;
      const price = Math.max(m.tick, side === 'sell' ? mid - away : mid + away);
      const notional = Math.exp(Math.log(500) + 1.2 * gaussian(this.#random));
      return { venue: this.venue, symbol: m.symbol, base: m.base, quote: m.quote, id: m.nextTradeId++, price: price.toFixed(m.priceDecimals), qty: this.#qty(m, notional, price), side, time };
    });
    const liquidationTimes = () => (own === undefined ? times(liquidationsPerSecondPerMarket) : trades.filter(() => this.#random() < scheduledLiquidationShare).map((t) => t.time));
    const liquidations = m.perpetual
      ? liquidationTimes().map((time): SimLiquidation => {
          const positionSide = this.#random() < 0.5 ? 'long' : 'short';
          // A long is closed by a forced sell below the market, a short by a forced buy above it.
          const price = mid * (positionSide === 'long' ? 1 - 0.002 * this.#random() : 1 + 0.002 * this.#random());
          const notional = Math.exp(Math.log(5_000) + 1.5 * gaussian(this.#random));
          return { venue: this.venue, symbol: m.symbol, base: m.base, quote: m.quote, positionSide, price: price.toFixed(m.priceDecimals), qty: this.#qty(m, notional, price), time };
        })
      : [];
    return { trades, liquidations, diff: this.#moveBook(m, mid) };
  }

  /**
   * Moves the book to the new mid and returns what changed, as a depth diff. Like a real book it
   * changes a little at a time: the best bid and ask sit a tick or two from the mid, deeper levels
   * on a fixed grid about 1 bp apart (levels enter and leave as the mid crosses them), and a few
   * resting quantities change each step.
   */
  #moveBook(m: SimMarket, mid = this.mid(m)): BookDiff {
    const grid = m.tick * Math.max(1, Math.round((mid * 0.0001) / m.tick));
    const spread = (1 + Math.floor(this.#random() * 2)) * m.tick;
    const qty = (i: number) => this.#qty(m, Math.exp(gaussian(this.#random)) * (1 + i / 5) * 2_000, mid);
    const side = (levels: Map<string, string>, sign: 1 | -1): [string, string][] => {
      const key = sign === 1 ? 'bid' : 'ask';
      const best = (mid - sign * spread).toFixed(m.priceDecimals);
      const first = sign === 1 ? Math.floor(Number(best) / grid) : Math.ceil(Number(best) / grid);
      // The grid part only changes when the mid crosses a grid line: most steps reuse it.
      let cached = this.#grids.get(m)?.[key];
      if (cached?.first !== first) {
        const prices = Array.from({ length: m.levels - 1 }, (_, k) => (first - sign * (k + 1)) * grid)
          .filter((p) => p > 0)
          .map((p) => p.toFixed(m.priceDecimals));
        cached = { first, prices, priceSet: new Set(prices) };
        this.#grids.set(m, { ...this.#grids.get(m)!, [key]: cached });
      }
      const prices = [best, ...cached.prices];
      const onGrid = cached.priceSet;
      const out: [string, string][] = [];
      for (const p of levels.keys()) {
        if (p === best || onGrid.has(p)) continue;
        levels.delete(p);
        out.push([p, '0']);
      }
      prices.forEach((p, i) => {
        if (levels.has(p)) return;
        levels.set(p, qty(i));
        out.push([p, levels.get(p)!]);
      });
      for (let k = 0; k < 3; k++) {
        const i = Math.floor(this.#random() * prices.length);
        const q = qty(i);
        levels.set(prices[i]!, q);
        out.push([prices[i]!, q]);
      }
      return out;
    };
    const bids = side(m.bids, 1);
    const asks = side(m.asks, -1);
    const firstUpdateId = m.updateId + 1;
    m.updateId += Math.max(1, bids.length + asks.length);
    return { firstUpdateId, finalUpdateId: m.updateId, bids, asks };
  }
}

/**
 * Sorted levels of a side, best first, at most `limit`. Each price is read as a number once, not at
 * every comparison: the venues' checksums sort a book at every step (a 50-level side: 26-32 µs a
 * call before, 6-10 µs after; test/bench/RESULTS.md).
 */
export function sortedLevels(levels: Map<string, string>, side: 'bid' | 'ask', limit = Infinity): [string, string][] {
  const keyed = Array.from(levels, (level): [number, [string, string]] => [Number(level[0]), level]);
  keyed.sort(side === 'bid' ? (a, b) => b[0] - a[0] : (a, b) => a[0] - b[0]);
  const count = Math.min(limit, keyed.length);
  const out: [string, string][] = new Array(count);
  for (let i = 0; i < count; i++) out[i] = keyed[i]![1];
  return out;
}
