// Every trade a simulated venue printed (its market model made it), whether or not a subscriber
// got it: what the venue's REST trade history answers from, and what a test compares with what
// was stored. Bounded: the last `retainPerMarket` trades of each market are kept, and with
// `retainMs` only those printed within that time before the market's newest: the simulated venue's
// history reach. All are counted. Kept as columns of numbers, not as trade objects: 38 bytes a
// trade against 208 (300,000 trades over 6,000 markets, the heap after a full collection), and the
// demo's 2,000 assets print about that many in the ten minutes its venues keep.
import type { SimTrade } from './market.ts';

export class PrintedTrades {
  readonly retainPerMarket: number;
  /** How far back from a market's newest trade its trades are kept (ms): Infinity keeps `retainPerMarket` whatever their age. */
  readonly retainMs: number;
  readonly #bySymbol = new Map<string, TradeColumns>();
  readonly #listeners = new Set<(trade: SimTrade) => void>();
  #count = 0;

  constructor(retainPerMarket: number, retainMs = Infinity) {
    if (!Number.isSafeInteger(retainPerMarket) || retainPerMarket < 1) throw new RangeError(`retainPerMarket must be a positive integer, got ${retainPerMarket}`);
    if (!(retainMs > 0)) throw new RangeError(`retainMs must be positive, got ${retainMs}`);
    this.retainPerMarket = retainPerMarket;
    this.retainMs = retainMs;
  }

  /** Trades of one model step, in the order printed (each market's ids and times rise). */
  push(trades: readonly SimTrade[]): void {
    for (const trade of trades) {
      let columns = this.#bySymbol.get(trade.symbol);
      if (!columns) this.#bySymbol.set(trade.symbol, (columns = new TradeColumns(trade)));
      columns.push(trade);
      columns.dropOlderThan(trade.time - this.retainMs);
      columns.dropBeyond(this.retainPerMarket);
      this.#count += 1;
      for (const listener of this.#listeners) listener(trade);
    }
  }

  /** Calls `listener` with every trade printed from now on; returns its remover. */
  onPrinted(listener: (trade: SimTrade) => void): () => void {
    this.#listeners.add(listener);
    return () => void this.#listeners.delete(listener);
  }

  /** Trades of a market the memory has room for: its kept trades, and the free room of its columns. */
  held(symbol: string): number {
    return this.#bySymbol.get(symbol)?.room ?? 0;
  }

  /** Trades printed since the start, kept or not. */
  get count(): number {
    return this.#count;
  }

  /** Whether trades of a market have been dropped: only then does its history stop short of its first trade. */
  trimmed(symbol: string): boolean {
    const columns = this.#bySymbol.get(symbol);
    return columns !== undefined && columns.printed > columns.length;
  }

  /** The kept trades of a market, oldest first (the oldest is the history's reach). */
  of(symbol: string): SimTrade[] {
    const columns = this.#bySymbol.get(symbol);
    return columns ? columns.slice(0, columns.length) : [];
  }

  /** Kept trades of `symbol` with an id above `id`, oldest first, at most `limit`. */
  afterId(symbol: string, id: number, limit: number): SimTrade[] {
    const columns = this.#bySymbol.get(symbol);
    if (!columns) return [];
    const from = columns.firstIndex((i) => columns.idAt(i) > id);
    return columns.slice(from, from + limit);
  }

  /** Kept trades of `symbol` with an id below `id`, newest first, at most `limit`. */
  beforeId(symbol: string, id: number, limit: number): SimTrade[] {
    const columns = this.#bySymbol.get(symbol);
    if (!columns) return [];
    const end = columns.firstIndex((i) => columns.idAt(i) >= id);
    return columns.slice(Math.max(0, end - limit), end).reverse();
  }

  /** Kept trades of `symbol` printed at or after `from` and before `to` (unix ms), oldest first, at most `limit`. */
  between(symbol: string, from: number, to: number, limit: number): SimTrade[] {
    const columns = this.#bySymbol.get(symbol);
    if (!columns) return [];
    const start = columns.firstIndex((i) => columns.timeAt(i) >= from);
    const end = columns.firstIndex((i) => columns.timeAt(i) >= to);
    return columns.slice(start, Math.min(end, start + limit));
  }

  /** The latest `n` kept trades of `symbol`, newest first. */
  latest(symbol: string, n: number): SimTrade[] {
    const columns = this.#bySymbol.get(symbol);
    return columns ? columns.slice(Math.max(0, columns.length - n), columns.length).reverse() : [];
  }
}

/** Room a market's columns start with, and below which they never shrink. */
const smallestRoom = 16;

/**
 * One market's kept trades, a column per field: the kept ones are the slots from `#start` to
 * `#end`. Prices and quantities are kept as numbers with their count of decimals, which gives
 * back the venue's string exactly (a push whose string would not come back is refused).
 */
class TradeColumns {
  readonly venue: string;
  readonly symbol: string;
  readonly base: string;
  readonly quote: string;
  /** Trades of this market printed since the start, kept or not. */
  printed = 0;
  #ids = new Float64Array(smallestRoom);
  #times = new Float64Array(smallestRoom);
  #prices = new Float64Array(smallestRoom);
  #qtys = new Float64Array(smallestRoom);
  /** Per slot: the price's decimals, the quantity's, and the side (1 = buy). */
  #priceDecimals = new Uint8Array(smallestRoom);
  #qtyDecimals = new Uint8Array(smallestRoom);
  #buys = new Uint8Array(smallestRoom);
  #start = 0;
  #end = 0;

  constructor(first: SimTrade) {
    this.venue = first.venue;
    this.symbol = first.symbol;
    this.base = first.base;
    this.quote = first.quote;
  }

  get length(): number {
    return this.#end - this.#start;
  }

  get room(): number {
    return this.#ids.length;
  }

  push(trade: SimTrade): void {
    if (trade.venue !== this.venue || trade.base !== this.base || trade.quote !== this.quote) {
      throw new RangeError(`trade ${trade.id} of ${trade.symbol} is ${trade.venue} ${trade.base}/${trade.quote}; the market's first was ${this.venue} ${this.base}/${this.quote}`);
    }
    if (this.#end === this.room) this.#moveTo(this.length * 2 <= this.room ? this.room : this.room * 2);
    const slot = this.#end++;
    this.#ids[slot] = trade.id;
    this.#times[slot] = trade.time;
    [this.#prices[slot], this.#priceDecimals[slot]] = decimalAsNumber(trade.price, trade);
    [this.#qtys[slot], this.#qtyDecimals[slot]] = decimalAsNumber(trade.qty, trade);
    this.#buys[slot] = trade.side === 'buy' ? 1 : 0;
    this.printed += 1;
  }

  /** Drops the oldest trades printed before `time`. */
  dropOlderThan(time: number): void {
    while (this.#start < this.#end && this.#times[this.#start]! < time) this.#start += 1;
    this.#shrinkIfSparse();
  }

  /** Drops the oldest trades beyond the newest `count`. */
  dropBeyond(count: number): void {
    this.#start = Math.max(this.#start, this.#end - count);
    this.#shrinkIfSparse();
  }

  /** The kept trade at `index` (0: the oldest kept). */
  idAt(index: number): number {
    return this.#ids[this.#start + index]!;
  }

  timeAt(index: number): number {
    return this.#times[this.#start + index]!;
  }

  /** The kept trades from index `from` up to (not including) `to`, oldest first, as the venue printed them. */
  slice(from: number, to: number): SimTrade[] {
    const out: SimTrade[] = [];
    for (let slot = this.#start + from; slot < this.#start + Math.min(to, this.length); slot++) {
      out.push({
        venue: this.venue,
        symbol: this.symbol,
        base: this.base,
        quote: this.quote,
        id: this.#ids[slot]!,
        price: this.#prices[slot]!.toFixed(this.#priceDecimals[slot]),
        qty: this.#qtys[slot]!.toFixed(this.#qtyDecimals[slot]),
        side: this.#buys[slot] === 1 ? 'buy' : 'sell',
        time: this.#times[slot]!,
      });
    }
    return out;
  }

  /** The first index whose trade passes `test`, for a test that passes for the newest trades only. */
  firstIndex(test: (index: number) => boolean): number {
    let low = 0;
    let high = this.length;
    while (low < high) {
      const mid = (low + high) >>> 1;
      if (test(mid)) high = mid;
      else low = mid + 1;
    }
    return low;
  }

  /** Halves the room once a quarter of it is used: a market that printed a burst gives the room back. */
  #shrinkIfSparse(): void {
    if (this.room > smallestRoom && this.length * 4 <= this.room) this.#moveTo(this.room / 2);
  }

  /** Moves the kept trades to the front of columns of `room` slots (new ones when the room changes). */
  #moveTo(room: number): void {
    const moved = <A extends Float64Array | Uint8Array>(column: A, make: (n: number) => A): A => {
      const target = room === column.length ? column : make(room);
      target.set(column.subarray(this.#start, this.#end));
      return target;
    };
    this.#ids = moved(this.#ids, (n) => new Float64Array(n));
    this.#times = moved(this.#times, (n) => new Float64Array(n));
    this.#prices = moved(this.#prices, (n) => new Float64Array(n));
    this.#qtys = moved(this.#qtys, (n) => new Float64Array(n));
    this.#priceDecimals = moved(this.#priceDecimals, (n) => new Uint8Array(n));
    this.#qtyDecimals = moved(this.#qtyDecimals, (n) => new Uint8Array(n));
    this.#buys = moved(this.#buys, (n) => new Uint8Array(n));
    this.#end = this.length;
    this.#start = 0;
  }
}

/** A venue's decimal string as its number and count of decimals, refused unless they give the string back. */
function decimalAsNumber(text: string, trade: SimTrade): [number, number] {
  const dot = text.indexOf('.');
  const decimals = dot < 0 ? 0 : text.length - dot - 1;
  const value = Number(text);
  if (decimals > 100 || value.toFixed(decimals) !== text) throw new RangeError(`trade ${trade.id} of ${trade.symbol}: ${JSON.stringify(text)} is not a plain decimal that its number gives back`);
  return [value, decimals];
}

/**
 * A history page's size as a venue takes it from its count parameter: the venue's default when none
 * is given, else within 1..`max` (a count out of range is served at the bound: what the venues
 * answer to one is not documented).
 */
export function pageSize(asked: string | null, max: number, fallback: number): number {
  const n = Number(asked ?? fallback);
  return Number.isFinite(n) ? Math.min(max, Math.max(1, Math.trunc(n))) : fallback;
}

/**
 * A venue's REST rate limit: `limit` requests in any `windowMs` (a sliding window, one second
 * unless the venue counts over longer), beyond which the venue answers with its own refusal (its
 * status and body, as each protocol file says). Venues that then shut the client out for a while
 * (Bitfinex for 60 s, Bybit for 10 minutes) give `blockMs`: every request in it is refused too.
 */
export class RestRateLimit {
  readonly limit: number;
  readonly windowMs: number;
  readonly blockMs: number;
  #times: number[] = [];
  #blockedUntil = -Infinity;
  /** Requests refused so far. */
  refused = 0;

  constructor(limit: number, windowMs = 1_000, blockMs = 0) {
    this.limit = limit;
    this.windowMs = windowMs;
    this.blockMs = blockMs;
  }

  /** True when one more request fits now; false (and counted) when the venue refuses it. */
  take(now = Date.now()): boolean {
    // Times only rise: the ones out of the window are at the front.
    while (this.#times.length > 0 && now - this.#times[0]! >= this.windowMs) this.#times.shift();
    if (now < this.#blockedUntil || this.#times.length >= this.limit) {
      if (now >= this.#blockedUntil) this.#blockedUntil = now + this.blockMs;
      this.refused += 1;
      return false;
    }
    this.#times.push(now);
    return true;
  }
}
