// ccxt's unified structures read as our venue messages, by the rules of ingest/EVENTS.md: its
// markets as listings, its trades and liquidations as reports for the emit path (ingest/emitPath.ts),
// and the drain of its caches that finds what has not been published yet. No I/O here.
import type { Exchange, Liquidation, Market, Trade } from 'ccxt';
import type { Reported } from './emitPath.ts';
import type { MarketListing, VenueMarket } from './venue.ts';
import type { CcxtVenue } from './venues/ccxtVenues.ts';

/** ccxt numbers as plain decimal strings (no exponent), for the exact contract-size product. */
export const decimalText = (exchange: Exchange, n: number) => exchange.numberToString(n) as string;

/**
 * The markets of the venue's kind ccxt lists: spot pairs, or linear perpetual swaps whose contract
 * size ccxt knows (inverse contracts count in quote currency, not base units). `symbol` is the
 * venue's own id; `unified` maps it back to ccxt's symbol.
 */
export function ccxtListings(venue: Pick<CcxtVenue, 'contract'>, markets: readonly Market[], exchange: Exchange): { listing: MarketListing; unified: string }[] {
  const out: { listing: MarketListing; unified: string }[] = [];
  for (const m of markets) {
    if (!m || m.active === false || !m.id || !m.base || !m.quote) continue;
    const wanted = venue.contract === 'spot' ? m.spot === true : m.swap === true && m.linear === true && m.inverse !== true;
    if (!wanted) continue;
    let contractSize = '1';
    if (venue.contract === 'perpetual') {
      if (typeof m.contractSize !== 'number' || !(m.contractSize > 0)) continue;
      contractSize = decimalText(exchange, m.contractSize);
    }
    out.push({ listing: { symbol: m.id, base: m.base, quote: m.quote, contractSize }, unified: m.symbol });
  }
  return out;
}

/**
 * What ccxt holds that we have not published yet. ccxt settles a watcher of several markets with
 * the first market that updates; markets updated in the same burst of frames reach only its caches
 * (exchange.trades, exchange.liquidations), so every answer drains the caches of all the watcher's
 * markets, newest first back to the first item already seen. ccxt hands the same objects back until
 * its caches drop them: objects are remembered, not ids.
 */
export class UnseenItems {
  readonly #seen = new WeakSet<object>();

  take<T extends object>(answer: unknown, caches: readonly unknown[]): T[] {
    const out: T[] = [];
    const take = (item: unknown) => {
      if (item && typeof item === 'object' && !this.#seen.has(item)) {
        this.#seen.add(item);
        out.push(item as T);
      }
    };
    for (const cache of caches) {
      if (!Array.isArray(cache)) continue;
      let from = cache.length;
      while (from > 0 && !this.#seen.has(cache[from - 1] as object)) from--;
      for (let i = from; i < cache.length; i++) take(cache[i]);
    }
    // Classes that keep their items elsewhere still answer with them.
    if (Array.isArray(answer)) answer.forEach(take);
    return out;
  }
}

/** ccxt's liquidation cache: one array (some classes) or one per market. */
export function liquidationCaches(exchange: Exchange, symbols: readonly string[]): unknown[] {
  const held = (exchange as unknown as { liquidations?: unknown }).liquidations;
  if (Array.isArray(held)) return [held];
  return held && typeof held === 'object' ? symbols.map((s) => (held as Record<string, unknown>)[s]) : [];
}

/**
 * ccxt trades of followed markets (by unified symbol) as reports. A trade without a venue id gets
 * one from its content; equal trades in one drain are told apart by their position.
 */
export function tradeReports(exchange: Exchange, byUnified: ReadonlyMap<string, VenueMarket>, trades: readonly Trade[], receivedAt: number): Reported[] {
  const reports: Reported[] = [];
  const sameContent = new Map<string, number>();
  for (const t of trades) {
    const market = byUnified.get(t.symbol ?? '');
    if (!market) continue;
    const ts = Math.floor(t.timestamp ?? receivedAt);
    let tradeId = t.id ?? undefined;
    if (!tradeId) {
      const content = `${ts}-${t.side}-${t.price}-${t.amount}`;
      const n = sameContent.get(content) ?? 0;
      sameContent.set(content, n + 1);
      tradeId = `~${content}-${n}`;
    }
    const side = t.side === 'buy' || t.side === 'sell' ? t.side : undefined;
    reports.push(
      side && typeof t.price === 'number' && typeof t.amount === 'number'
        ? { kind: 'trade', symbol: market.symbol, tradeId, price: decimalText(exchange, t.price), quantity: decimalText(exchange, t.amount), side, ts }
        : { kind: 'unreadable', of: 'trade', symbol: market.symbol, id: tradeId },
    );
  }
  return reports;
}

/**
 * ccxt liquidations of followed markets as reports. `liquidationSide` says whose side ccxt's `side`
 * is on the venue: the liquidation order's (a sell closes a long) or the position's.
 */
export function liquidationReports(
  exchange: Exchange,
  byUnified: ReadonlyMap<string, VenueMarket>,
  liquidationSide: 'order' | 'position',
  liquidations: readonly Liquidation[],
  receivedAt: number,
): Reported[] {
  const closed = liquidationSide === 'order' ? { sell: 'long', buy: 'short' } as const : { buy: 'long', sell: 'short' } as const;
  const reports: Reported[] = [];
  for (const l of liquidations) {
    const market = byUnified.get(l.symbol ?? '');
    if (!market) continue;
    const ts = Math.floor(l.timestamp ?? receivedAt);
    // ccxt gives no id: these fields identify a liquidation within a market.
    const liquidationId = `${ts}-${l.side}-${l.price}-${l.contracts}`;
    const positionSide = l.side === 'buy' || l.side === 'sell' ? closed[l.side] : undefined;
    reports.push(
      positionSide && typeof l.price === 'number' && typeof l.contracts === 'number'
        ? { kind: 'liquidation', symbol: market.symbol, liquidationId, price: decimalText(exchange, l.price), quantity: decimalText(exchange, l.contracts), positionSide, ts }
        : { kind: 'unreadable', of: 'liquidation', symbol: market.symbol, id: liquidationId },
    );
  }
  return reports;
}
