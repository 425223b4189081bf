// Binance spot's public websocket streams and REST API over the SIMULATED market model: the
// collector reads it exactly as it would read the venue. The trade history
// (`/api/v3/historicalTrades`) answers from the trades the venue printed, sent or not.
import { simulatedTickers, sortedLevels, type ListingFormat, type ListingSpec, type SimMarket, type SimTrade } from './market.ts';
import { RestRateLimit } from './printedTrades.ts';
import type { SimClient, SimVenueServer, VenueProtocol } from './venueServer.ts';

/** Binance writes base and quote together (BTCUSDT), on spot and USD-M futures alike. */
export const binanceFormat: ListingFormat = { quotes: ['USDT', 'USDC'], appetite: 4, market: (base, quote) => ({ symbol: `${base}${quote}`, base, quote }) };

export function binanceListings(tickers: readonly string[] = simulatedTickers): ListingSpec[] {
  // A BTC-quoted market too, so collectors have something to filter out.
  return [...tickers.map((t) => binanceFormat.market(t, 'USDT')), { symbol: 'ETHBTC', base: 'ETH', quote: 'BTC' }];
}

/**
 * Binance's stream subscriptions, shared by spot and USD-M: streams from the URL
 * (`/stream?streams=a/b` or `/ws/a`), then SUBSCRIBE / UNSUBSCRIBE / LIST_SUBSCRIPTIONS requests.
 * Topics are stored as `<route>:<stream>` so a stream is only served on the route that carries it.
 */
export function binanceStreamRequests(server: SimVenueServer, route: (client: SimClient) => string) {
  const combined = (c: SimClient) => c.url.pathname.endsWith('/stream');
  return {
    open(client: SimClient): void {
      const initial = combined(client) ? (client.url.searchParams.get('streams') ?? '').split('/') : [client.url.pathname.replace(/^.*\/ws\/?/, '')];
      for (const s of initial.filter(Boolean)) client.topics.add(`${route(client)}:${s}`);
    },
    message(client: SimClient, text: string): void {
      let request: { method?: unknown; params?: unknown; id?: unknown };
      try {
        request = JSON.parse(text);
      } catch {
        server.send(client, { error: { code: 3, msg: 'Invalid JSON' } });
        return;
      }
      const params = Array.isArray(request.params) ? request.params.map(String) : [];
      if (request.method === 'SUBSCRIBE') for (const s of params) client.topics.add(`${route(client)}:${s}`);
      else if (request.method === 'UNSUBSCRIBE') for (const s of params) client.topics.delete(`${route(client)}:${s}`);
      else if (request.method === 'LIST_SUBSCRIPTIONS') {
        server.send(client, { result: [...client.topics].map((t) => t.slice(t.indexOf(':') + 1)), id: request.id });
        return;
      } else {
        server.send(client, { error: { code: 2, msg: 'Invalid request' }, id: request.id });
        return;
      }
      server.send(client, { result: null, id: request.id });
    },
    /** Sends `data` on `route:stream`, wrapped for combined-stream clients. */
    publish(routeName: string, stream: string, data: unknown): boolean {
      return server.publish(`${routeName}:${stream}`, (c) => (combined(c) ? { stream, data } : data));
    },
  };
}

export function depthSnapshot(m: SimMarket, limit: number) {
  return { lastUpdateId: m.updateId, bids: sortedLevels(m.bids, 'bid', limit), asks: sortedLevels(m.asks, 'ask', limit) };
}

/** A whole-number query parameter; undefined when absent, NaN when not a number. */
export function numberParam(url: URL, name: string): number | undefined {
  const value = url.searchParams.get(name);
  return value === null ? undefined : /^-?\d+$/.test(value) ? Number(value) : Number.NaN;
}

/**
 * What both Binance trade histories check first: the IP's request weight (refused with -1003 and the
 * limit's words), the symbol, and `limit` (default 500, at most 1000).
 */
export function historyRequest(server: SimVenueServer, url: URL, limiter: RestRateLimit, refusal: string): { answer: { status: number; body: unknown } } | { symbol: string; limit: number } {
  if (!limiter.take()) return { answer: { status: 429, body: { code: -1003, msg: refusal } } };
  const symbol = url.searchParams.get('symbol') ?? '';
  if (!server.listing.bySymbol.has(symbol)) return { answer: { status: 400, body: { code: -1121, msg: 'Invalid symbol.' } } };
  const limit = numberParam(url, 'limit') ?? 500;
  if (!(limit >= 1 && limit <= 1_000)) return { answer: { status: 400, body: { code: -1130, msg: "Data sent for parameter 'limit' is not valid." } } };
  return { symbol, limit };
}

/** The IP's request weight: 6,000 a minute; historicalTrades weighs 25: 240 calls a minute. */
const spotWeightPerMinute = 6_000;
export const binanceHistoryLimit = { limit: spotWeightPerMinute / 25, windowMs: 60_000 };

/**
 * `GET /api/v3/historicalTrades`: up to `limit` (default 500, at most 1000) trades from `fromId`
 * up, oldest first; without fromId the latest. A fromId older than the venue keeps starts at the
 * oldest it has (as `fromId=1` does on the venue, binance-public-data#376).
 */
function historicalTrades(server: SimVenueServer, url: URL, limiter: RestRateLimit) {
  const refusal = `Too much request weight used; current limit is ${spotWeightPerMinute} request weight per 1 MINUTE. Please use WebSocket Streams for live updates to avoid polling the API.`;
  const asked = historyRequest(server, url, limiter, refusal);
  if ('answer' in asked) return asked.answer;
  const { symbol, limit } = asked;
  const fromId = numberParam(url, 'fromId');
  const trades = fromId === undefined ? server.printed.latest(symbol, limit).reverse() : server.printed.afterId(symbol, fromId - 1, limit);
  return { status: 200, body: trades.map(historicalTradeRow) };
}

/** A trade as historicalTrades writes it: isBuyerMaker when the taker sold. */
const historicalTradeRow = (t: SimTrade) => ({
  id: t.id,
  price: t.price,
  qty: t.qty,
  quoteQty: String(Number(t.price) * Number(t.qty)),
  time: t.time,
  isBuyerMaker: t.side === 'sell',
  isBestMatch: true,
});

export function binanceProtocol(server: SimVenueServer): VenueProtocol {
  // Looked up live: markets list and delist while the server runs.
  const bySymbol = server.listing.bySymbol;
  const streams = binanceStreamRequests(server, () => 'spot');
  const historyLimit = new RestRateLimit(binanceHistoryLimit.limit, binanceHistoryLimit.windowMs);
  return {
    rest(url) {
      if (url.pathname === '/api/v3/historicalTrades') return historicalTrades(server, url, historyLimit);
      if (url.pathname === '/api/v3/exchangeInfo') {
        return {
          status: 200,
          body: {
            timezone: 'UTC',
            serverTime: Date.now(),
            rateLimits: [],
            exchangeFilters: [],
            symbols: server.listing.markets.map((m) => ({
              symbol: m.symbol,
              status: 'TRADING',
              baseAsset: m.base,
              baseAssetPrecision: 8,
              quoteAsset: m.quote,
              quotePrecision: 8,
              filters: [{ filterType: 'PRICE_FILTER', tickSize: m.tick.toFixed(m.priceDecimals) }],
            })),
          },
        };
      }
      if (url.pathname === '/api/v3/depth') {
        const m = bySymbol.get(url.searchParams.get('symbol') ?? '');
        if (!m) return { status: 400, body: { code: -1121, msg: 'Invalid symbol.' } };
        return { status: 200, body: depthSnapshot(m, Math.min(5_000, Number(url.searchParams.get('limit') ?? 100) || 100)) };
      }
      return undefined;
    },
    open: streams.open,
    message: streams.message,
    publish(m, step, now) {
      const name = m.symbol.toLowerCase();
      for (const t of step.trades) {
        // m: the buyer was the maker, i.e. the taker sold.
        const data = { e: 'trade', E: now, s: m.symbol, t: t.id, p: t.price, q: t.qty, T: t.time, m: t.side === 'sell', M: true };
        if (streams.publish('spot', `${name}@trade`, data)) server.trades.push(t);
      }
      if (server.takeGap(m.symbol)) return;
      const { diff } = step;
      const depth = { e: 'depthUpdate', E: now, s: m.symbol, U: diff.firstUpdateId, u: diff.finalUpdateId, b: diff.bids, a: diff.asks };
      streams.publish('spot', `${name}@depth@100ms`, depth);
      streams.publish('spot', `${name}@depth`, depth);
    },
    reconnectNotice: () => ({ e: 'serverShutdown', E: Date.now() }),
  };
}
