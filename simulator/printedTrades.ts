// Every trade a simulated venue printed (its market model made it), whether or not a subscriber
// got it: what the venue's REST trade history answers from, and what a test compares with what
// was stored. Bounded: the last `retainPerMarket` trades of each market are kept, and with
// `retainMs` only those printed within that time before the market's newest: the simulated venue's
// history reach. All are counted.
import type { SimTrade } from './market.ts';

export class PrintedTrades {
  readonly retainPerMarket: number;
  /** How far back from a market's newest trade its trades are kept (ms): Infinity keeps `retainPerMarket` whatever their age. */
  readonly retainMs: number;
  readonly #bySymbol = new Map<string, SimTrade[]>();
  readonly #listeners = new Set<(trade: SimTrade) => void>();
  #count = 0;
  readonly #printedOf = new Map<string, number>();

  constructor(retainPerMarket: number, retainMs = Infinity) {
    if (!Number.isSafeInteger(retainPerMarket) || retainPerMarket < 1) throw new RangeError(`retainPerMarket must be a positive integer, got ${retainPerMarket}`);
    if (!(retainMs > 0)) throw new RangeError(`retainMs must be positive, got ${retainMs}`);
    this.retainPerMarket = retainPerMarket;
    this.retainMs = retainMs;
  }

  /** Trades of one model step, in the order printed (each market's ids and times rise). */
  push(trades: readonly SimTrade[]): void {
    for (const trade of trades) {
      let list = this.#bySymbol.get(trade.symbol);
      if (!list) this.#bySymbol.set(trade.symbol, (list = []));
      list.push(trade);
      // Trimmed in one splice once twice the bound is held (in count or in age), not on every trade.
      if (list.length >= 2 * this.retainPerMarket || list[0]!.time < trade.time - 2 * this.retainMs) list.splice(0, list.length - this.#keptCount(list));
      this.#count += 1;
      this.#printedOf.set(trade.symbol, (this.#printedOf.get(trade.symbol) ?? 0) + 1);
      for (const listener of this.#listeners) listener(trade);
    }
  }

  /** How many of the newest trades of `list` are kept: at most retainPerMarket, none older than retainMs before the newest. */
  #keptCount(list: readonly SimTrade[]): number {
    const newest = list.at(-1);
    if (!newest) return 0;
    const youngFrom = firstIndex(list, (t) => t.time >= newest.time - this.retainMs);
    return Math.min(this.retainPerMarket, list.length - youngFrom);
  }

  /** Calls `listener` with every trade printed from now on; returns its remover. */
  onPrinted(listener: (trade: SimTrade) => void): () => void {
    this.#listeners.add(listener);
    return () => void this.#listeners.delete(listener);
  }

  /** Trades of a market held in memory: what `of` serves, and up to as many again awaiting their trim. */
  held(symbol: string): number {
    return this.#bySymbol.get(symbol)?.length ?? 0;
  }

  /** Trades printed since the start, kept or not. */
  get count(): number {
    return this.#count;
  }

  /** Whether trades of a market have been dropped: only then does its history stop short of its first trade. */
  trimmed(symbol: string): boolean {
    return (this.#printedOf.get(symbol) ?? 0) > this.of(symbol).length;
  }

  /** The kept trades of a market, oldest first (the oldest is the history's reach). */
  of(symbol: string): readonly SimTrade[] {
    const list = this.#bySymbol.get(symbol) ?? [];
    const kept = this.#keptCount(list);
    return kept < list.length ? list.slice(-kept) : list;
  }

  /** Kept trades of `symbol` with an id above `id`, oldest first, at most `limit`. */
  afterId(symbol: string, id: number, limit: number): SimTrade[] {
    const list = this.of(symbol);
    const from = firstIndex(list, (t) => t.id > id);
    return list.slice(from, from + limit);
  }

  /** Kept trades of `symbol` with an id below `id`, newest first, at most `limit`. */
  beforeId(symbol: string, id: number, limit: number): SimTrade[] {
    const list = this.of(symbol);
    const end = firstIndex(list, (t) => t.id >= id);
    return list.slice(Math.max(0, end - limit), end).reverse();
  }

  /** Kept trades of `symbol` printed at or after `from` and before `to` (unix ms), oldest first, at most `limit`. */
  between(symbol: string, from: number, to: number, limit: number): SimTrade[] {
    const list = this.of(symbol);
    const start = firstIndex(list, (t) => t.time >= from);
    const out: SimTrade[] = [];
    for (let i = start; i < list.length && out.length < limit && list[i]!.time < to; i++) out.push(list[i]!);
    return out;
  }

  /** The latest `n` kept trades of `symbol`, newest first. */
  latest(symbol: string, n: number): SimTrade[] {
    return this.of(symbol).slice(-n).reverse();
  }
}

/** The first index whose item passes `test`, for a list in which passing items are all at the end. */
function firstIndex<T>(list: readonly T[], test: (item: T) => boolean): number {
  let low = 0;
  let high = list.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if (test(list[mid]!)) high = mid;
    else low = mid + 1;
  }
  return low;
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
