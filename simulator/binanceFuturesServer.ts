// Binance USD-M futures' routed market streams (/public for depth, /market for trades and
// liquidations) and REST API over the SIMULATED market model. The aggregate trade history
// (`/fapi/v1/aggTrades`) answers from the trades the venue printed, sent or not.
import { binanceFormat, binanceStreamRequests, depthSnapshot, historyRequest, numberParam } from './binanceServer.ts';
import { simulatedTickers, type ListingFormat, type ListingSpec, type SimTrade } from './market.ts';
import { RestRateLimit } from './printedTrades.ts';
import type { SimVenueServer, VenueProtocol } from './venueServer.ts';

/** Tiny-priced assets trade per 1000 units on Binance futures (1000PEPEUSDT), or per million (1000000MOGUSDT). */
const perThousand = new Set(['PEPE', 'SHIB']);

export const binanceFuturesFormat: ListingFormat = {
  quotes: ['USDT', 'USDC'],
  appetite: 5,
  market: (base, quote) => ({ ...binanceFormat.market(base, quote), perpetual: true }),
  scaled: (base, unit) => ({ symbol: `${unit}${base}USDT`, base: `${unit}${base}`, quote: 'USDT', unit, perpetual: true }),
};

export function binanceFuturesListings(tickers: readonly string[] = simulatedTickers): ListingSpec[] {
  return tickers.map((t) => (perThousand.has(t) ? binanceFuturesFormat.scaled!(t, 1000) : binanceFuturesFormat.market(t, 'USDT')));
}

/** The IP's request weight: 2,400 a minute; aggTrades weighs 20: 120 calls a minute. */
const futuresWeightPerMinute = 2_400;
export const binanceFuturesHistoryLimit = { limit: futuresWeightPerMinute / 20, windowMs: 60_000 };
/** The venue's refusal of trades older than its window (its own two days; here, older than it keeps). */
const outsideWindow = { status: 400, body: { code: -4166, msg: 'Search window is restricted to recent 2 days only.' } };

/** Each simulated trade is its own aggregate (one taker order, one price), as the stream says. */
const aggTradeRow = (t: SimTrade) => ({ a: t.id, p: t.price, q: t.qty, f: t.id, l: t.id, T: t.time, m: t.side === 'sell' });

/**
 * `GET /fapi/v1/aggTrades`: up to `limit` (default 500, at most 1000) aggregate trades from
 * `fromId`, or from `startTime` (to `endTime`, less than an hour after), oldest first; neither: the
 * latest. Asked for trades older than it keeps, it refuses as the venue does past its window.
 */
function aggTrades(server: SimVenueServer, url: URL, limiter: RestRateLimit) {
  const refusal = `Too much request weight used; current limit is ${futuresWeightPerMinute} request weight per 1 MINUTE. Please use the websocket for live updates to avoid polling the API.`;
  const asked = historyRequest(server, url, limiter, refusal);
  if ('answer' in asked) return asked.answer;
  const { symbol, limit } = asked;
  const [fromId, startTime, endTime] = [numberParam(url, 'fromId'), numberParam(url, 'startTime'), numberParam(url, 'endTime')];
  // The window is what the venue dropped: a history that still starts at the market's first trade answers any start.
  const oldest = server.printed.trimmed(symbol) ? server.printed.of(symbol)[0] : undefined;
  if (oldest && ((fromId !== undefined && fromId < oldest.id) || (startTime !== undefined && startTime < oldest.time))) return outsideWindow;
  if (startTime !== undefined && endTime !== undefined && !(endTime - startTime < 3_600_000)) {
    return { status: 400, body: { code: -1127, msg: 'More than 1 hours between startTime and endTime.' } };
  }
  let trades: SimTrade[];
  if (fromId !== undefined) trades = server.printed.afterId(symbol, fromId - 1, limit);
  else if (startTime !== undefined) trades = server.printed.between(symbol, startTime, endTime === undefined ? Infinity : endTime + 1, limit);
  else trades = server.printed.latest(symbol, limit).reverse();
  return { status: 200, body: trades.map(aggTradeRow) };
}

export function binanceFuturesProtocol(server: SimVenueServer): VenueProtocol {
  // Looked up live: markets list and delist while the server runs.
  const bySymbol = server.listing.bySymbol;
  // A stream subscribed on the wrong route is accepted and never served, as on the venue.
  const streams = binanceStreamRequests(server, (c) => (c.url.pathname.startsWith('/market') ? 'market' : c.url.pathname.startsWith('/public') ? 'public' : 'legacy'));
  /** The venue pushes at most one liquidation per symbol per second. */
  const lastLiquidationAt = new Map<string, number>();
  const historyLimit = new RestRateLimit(binanceFuturesHistoryLimit.limit, binanceFuturesHistoryLimit.windowMs);
  return {
    rest(url) {
      if (url.pathname === '/fapi/v1/aggTrades') return aggTrades(server, url, historyLimit);
      if (url.pathname === '/fapi/v1/exchangeInfo') {
        return {
          status: 200,
          body: {
            timezone: 'UTC',
            serverTime: Date.now(),
            symbols: server.listing.markets.map((m) => ({
              symbol: m.symbol,
              pair: m.symbol,
              contractType: 'PERPETUAL',
              status: 'TRADING',
              baseAsset: m.base,
              quoteAsset: m.quote,
              marginAsset: m.quote,
              pricePrecision: m.priceDecimals,
              quantityPrecision: m.qtyDecimals,
            })),
          },
        };
      }
      if (url.pathname === '/fapi/v1/depth') {
        const m = bySymbol.get(url.searchParams.get('symbol') ?? '');
        if (!m) return { status: 400, body: { code: -1121, msg: 'Invalid symbol.' } };
        const now = Date.now();
        return { status: 200, body: { ...depthSnapshot(m, Math.min(1_000, Number(url.searchParams.get('limit') ?? 500) || 500)), E: now, T: now } };
      }
      return undefined;
    },
    open: streams.open,
    message: streams.message,
    publish(m, step, now) {
      const name = m.symbol.toLowerCase();
      for (const t of step.trades) {
        // Each simulated trade is its own aggregate (one taker order, one price).
        const data = { e: 'aggTrade', E: now, s: m.symbol, a: t.id, p: t.price, q: t.qty, f: t.id, l: t.id, T: t.time, m: t.side === 'sell' };
        if (streams.publish('market', `${name}@aggTrade`, data)) server.trades.push(t);
      }
      for (const l of step.liquidations) {
        if (l.time - (lastLiquidationAt.get(m.symbol) ?? -Infinity) < 1_000) continue;
        const order = { s: m.symbol, S: l.positionSide === 'long' ? 'SELL' : 'BUY', o: 'LIMIT', f: 'IOC', q: l.qty, p: l.price, ap: l.price, X: 'FILLED', l: l.qty, z: l.qty, T: l.time };
        if (streams.publish('market', '!forceOrder@arr', { e: 'forceOrder', E: now, o: order })) {
          lastLiquidationAt.set(m.symbol, l.time);
          server.liquidations.push(l);
        }
      }
      if (server.takeGap(m.symbol)) return;
      const { diff } = step;
      // `pu` is the previous diff's last id, sent or not: a skipped diff shows as a broken chain.
      const depth = { e: 'depthUpdate', E: now, T: now, s: m.symbol, U: diff.firstUpdateId, u: diff.finalUpdateId, pu: diff.firstUpdateId - 1, b: diff.bids, a: diff.asks };
      streams.publish('public', `${name}@depth@100ms`, depth);
    },
    reconnectNotice: () => ({ e: 'serverShutdown', E: Date.now() }),
  };
}
