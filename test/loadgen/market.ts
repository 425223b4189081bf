// What the load generator trades: per market, a fixed ladder of price levels around a start price
// whose quantities change (so a collector's book stays consistent whatever the rate: no level
// ever crosses, none appears or vanishes), pools of trade prices and quantities as the venue would
// write them, and a per-market trade id counter. Nothing here models a market: the generator has
// to cost little CPU, the service gets the machine.
import { MarketModel, seededRandom } from '../../simulator/market.ts';

/** Levels per side; OKX's checksum covers 25, Bybit keeps 50. */
export const levelsPerSide = 25;
const poolSize = 256;

export type Level = [price: string, quantity: string];

export interface LoadMarket {
  /** The venue's symbol (BTCUSDT, BTC-USDT, BTC-USD). */
  symbol: string;
  base: string;
  quote: string;
  /** Best first. */
  bids: Level[];
  asks: Level[];
  /** The book's update id: +1 per book message. */
  updateId: number;
  tradePrices: string[];
  quantities: string[];
  /** Next trade's number in this market (ids are made from it, venue by venue). */
  nextTrade: number;
  /** Round-robin positions in the pools and the ladder. */
  cursor: number;
}

/** Start prices shared by every venue (the simulator's), so the index sees agreeing venues. */
const reference = new MarketModel(1, { tradesPerSecondPerMarket: 1 });

const decimalsFor = (value: number, significant: number) => Math.min(12, Math.max(0, significant - 1 - Math.floor(Math.log10(value))));

/** `inverse`: quantities count contracts worth 1 unit of the quote, whole numbers (BitMEX's inverse perpetuals). */
export function loadMarket(symbol: string, base: string, quote: string, seed: number, inverse = false): LoadMarket {
  const random = seededRandom(seed);
  const mid = reference.reference(base, quote);
  const priceDecimals = decimalsFor(mid, 6);
  const tick = 10 ** -priceDecimals;
  const at = (ticks: number) => (mid + ticks * tick).toFixed(priceDecimals);
  // About $10 to $5,000 per order or trade, in base units at 4 significant digits (or in 1-dollar contracts).
  const quantity = () => {
    const usd = 10 + random() * 4_990;
    if (inverse) return usd.toFixed(0);
    const q = usd / mid;
    return q.toFixed(decimalsFor(q, 4));
  };
  const quantities = Array.from({ length: poolSize }, quantity);
  return {
    symbol,
    base,
    quote,
    bids: Array.from({ length: levelsPerSide }, (_, k) => [at(-1 - k), quantity()]),
    asks: Array.from({ length: levelsPerSide }, (_, k) => [at(1 + k), quantity()]),
    updateId: 1_000_000 + Math.floor(random() * 1_000_000),
    // Trades print at the best levels or within a few ticks of them.
    tradePrices: Array.from({ length: poolSize }, () => at(Math.round((random() - 0.5) * 8))),
    quantities,
    nextTrade: 100_000_000 + Math.floor(random() * 900_000_000),
    cursor: Math.floor(random() * poolSize),
  };
}

export interface TradePrint {
  /** The market's trade number: the venue's id is made from it. */
  n: number;
  price: string;
  quantity: string;
  /** Taker side. */
  side: 'buy' | 'sell';
}

export function nextTrade(m: LoadMarket): TradePrint {
  const c = (m.cursor = (m.cursor + 1) & (poolSize - 1));
  return { n: m.nextTrade++, price: m.tradePrices[c]!, quantity: m.quantities[(c * 7) & (poolSize - 1)]!, side: c & 1 ? 'buy' : 'sell' };
}

export interface BookChange {
  bid: Level;
  ask: Level;
  /** Update id of the message before this one, and of this one. */
  prevId: number;
  id: number;
}

/** One bid and one ask level get a new quantity; the book's update id moves by one. */
export function nextBookChange(m: LoadMarket): BookChange {
  const c = (m.cursor = (m.cursor + 1) & (poolSize - 1));
  const bid = m.bids[c % levelsPerSide]!;
  const ask = m.asks[(c * 11) % levelsPerSide]!;
  bid[1] = m.quantities[c]!;
  ask[1] = m.quantities[(c * 13) & (poolSize - 1)]!;
  const prevId = m.updateId++;
  return { bid: [bid[0], bid[1]], ask: [ask[0], ask[1]], prevId, id: m.updateId };
}
