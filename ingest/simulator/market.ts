// The market model behind the simulator: SIMULATED prices, trades and books, never market data.
// One seeded model per run, so a test can replay exactly what it was sent.

/** Simulator-only starting points: rough magnitudes so the demo looks plausible, nothing more. */
const startPrices: Record<string, number> = {
  BTC: 90_000, ETH: 3_000, BNB: 600, SOL: 150, XRP: 0.6, DOGE: 0.15, ADA: 0.45, TRX: 0.12, AVAX: 30,
  LINK: 15, DOT: 6, TON: 5, SHIB: 0.00002, LTC: 80, BCH: 400, NEAR: 5, UNI: 8, APT: 9, ICP: 10,
  ETC: 25, XLM: 0.1, FIL: 5, ATOM: 8, ARB: 0.9, OP: 2, SUI: 1.5, HBAR: 0.08, INJ: 25, RENDER: 7,
  AAVE: 150, ALGO: 0.18, PEPE: 0.00001, MKR: 2_000, GRT: 0.2,
};

/** Tickers the simulator lists against USDT (the catalog's non-stablecoin assets). */
export const simulatedTickers = Object.keys(startPrices);

export interface SimTrade {
  symbol: string;
  baseAsset: string;
  quoteAsset: string;
  id: number;
  /** Decimal strings, as the venue sends them. */
  price: string;
  qty: string;
  time: number;
  isBuyerMaker: boolean;
}

export interface SimMarket {
  symbol: string;
  baseAsset: string;
  quoteAsset: string;
  mid: number;
  /** Annualised-ish volatility per sqrt(second). */
  volatility: number;
  priceDecimals: number;
  qtyDecimals: number;
  tick: number;
  nextTradeId: number;
  /** Last update id of the book: every change advances it by one. */
  updateId: number;
  bids: Map<string, string>;
  asks: Map<string, string>;
}

/** Book changes of one step: [price, qty] strings, "0" removes a level. */
export interface BookDiff {
  firstUpdateId: number;
  finalUpdateId: number;
  bids: [string, string][];
  asks: [string, string][];
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

const levelsPerSide = 50;

export class MarketModel {
  readonly markets: SimMarket[];
  readonly #random: () => number;
  readonly #tradesPerSecond: number;

  constructor(seed: number, tradesPerSecondPerMarket: number) {
    this.#random = seededRandom(seed);
    this.#tradesPerSecond = tradesPerSecondPerMarket;
    const usdt = simulatedTickers.map((t) => this.#market(t, 'USDT', startPrices[t]!));
    // A BTC-quoted market, so collectors have something to filter out.
    this.markets = [...usdt, this.#market('ETH', 'BTC', startPrices.ETH! / startPrices.BTC!)];
    for (const m of this.markets) this.#rebuildBook(m);
  }

  #market(baseAsset: string, quoteAsset: string, mid: number): SimMarket {
    // About 6 significant digits of price, like most venue tick sizes.
    const priceDecimals = Math.max(2, Math.min(10, 5 - Math.floor(Math.log10(mid))));
    const qtyDecimals = Math.max(0, Math.min(8, Math.floor(Math.log10(mid)) + 2));
    return {
      symbol: baseAsset + quoteAsset,
      baseAsset,
      quoteAsset,
      mid,
      volatility: 0.0004 + this.#random() * 0.0006,
      priceDecimals,
      qtyDecimals,
      tick: 10 ** -priceDecimals,
      nextTradeId: 1 + Math.floor(this.#random() * 1e6),
      updateId: 1_000 + Math.floor(this.#random() * 1e6),
      bids: new Map(),
      asks: new Map(),
    };
  }

  #gaussian(): number {
    const u = 1 - this.#random();
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * this.#random());
  }

  /** Poisson count by inversion (small means only). */
  #poisson(mean: number): number {
    const limit = Math.exp(-mean);
    let k = 0;
    for (let p = this.#random(); p > limit; p *= this.#random()) k++;
    return k;
  }

  /** Advances one market by `dtMs`: trades in [from, to] (time order), then the book change. */
  step(m: SimMarket, from: number, to: number): { trades: SimTrade[]; diff: BookDiff } {
    m.mid *= Math.exp(m.volatility * Math.sqrt((to - from) / 1000) * this.#gaussian());
    const n = this.#poisson((this.#tradesPerSecond * (to - from)) / 1000);
    const times = Array.from({ length: n }, () => from + Math.floor(this.#random() * (to - from + 1))).sort((a, b) => a - b);
    const trades = times.map((time) => {
      const isBuyerMaker = this.#random() < 0.5;
      // The taker lifts the ask or hits the bid, a tick or a few away from the mid.
      const away = (1 + Math.floor(this.#random() * 3)) * m.tick;
      const price = Math.max(m.tick, isBuyerMaker ? m.mid - away : m.mid + away);
      const notional = Math.exp(Math.log(500) + 1.2 * this.#gaussian());
      const qty = Math.max(10 ** -m.qtyDecimals, notional / price);
      return {
        symbol: m.symbol,
        baseAsset: m.baseAsset,
        quoteAsset: m.quoteAsset,
        id: m.nextTradeId++,
        price: price.toFixed(m.priceDecimals),
        qty: qty.toFixed(m.qtyDecimals),
        time,
        isBuyerMaker,
      };
    });
    return { trades, diff: this.#rebuildBook(m) };
  }

  /** Redraws the book around the mid and returns what changed, as a depth diff. */
  #rebuildBook(m: SimMarket): BookDiff {
    const next = { bids: new Map<string, string>(), asks: new Map<string, string>() };
    const spreadTicks = 1 + Math.floor(this.#random() * 2);
    for (let i = 0; i < levelsPerSide; i++) {
      const offset = (spreadTicks + i * (1 + Math.floor(i / 10))) * m.tick;
      const qty = () => Math.max(10 ** -m.qtyDecimals, Math.exp(this.#gaussian()) * (1 + i / 5) * (2_000 / m.mid)).toFixed(m.qtyDecimals);
      if (m.mid - offset > 0) next.bids.set((m.mid - offset).toFixed(m.priceDecimals), qty());
      next.asks.set((m.mid + offset).toFixed(m.priceDecimals), qty());
    }
    const changes = (before: Map<string, string>, after: Map<string, string>): [string, string][] => {
      const out: [string, string][] = [];
      for (const p of before.keys()) if (!after.has(p)) out.push([p, '0']);
      for (const [p, q] of after) if (before.get(p) !== q) out.push([p, q]);
      return out;
    };
    const bids = changes(m.bids, next.bids);
    const asks = changes(m.asks, next.asks);
    m.bids = next.bids;
    m.asks = next.asks;
    const firstUpdateId = m.updateId + 1;
    m.updateId += Math.max(1, bids.length + asks.length);
    return { firstUpdateId, finalUpdateId: m.updateId, bids, asks };
  }
}
