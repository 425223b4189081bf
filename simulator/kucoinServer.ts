// KuCoin spot's websocket and REST over the SIMULATED market model: bullet-public (a token and this
// server as the endpoint), /market/match, /market/level2 (one number per change) with the
// level2_100 REST snapshot, ping/pong, and the last 100 trades (market/histories).
import { simulatedTickers, sortedLevels, type ListingFormat, type ListingSpec, type SimTrade } from './market.ts';
import { RestRateLimit } from './printedTrades.ts';
import type { SimClient, SimVenueServer, VenueProtocol } from './venueServer.ts';

export const kucoinFormat: ListingFormat = { quotes: ['USDT', 'USDC'], appetite: 9, market: (base, quote) => ({ symbol: `${base}-${quote}`, base, quote }) };

export function kucoinListings(tickers: readonly string[] = simulatedTickers): ListingSpec[] {
  return [...tickers.map((t) => kucoinFormat.market(t, 'USDT')), { symbol: 'ETH-BTC', base: 'ETH', quote: 'BTC' }];
}

const ok = (data: unknown) => ({ status: 200, body: { code: '200000', data } });
/** How often the simulated venue asks to be pinged (KuCoin answers 18 s today). */
const pingIntervalMs = 18_000;

/** market/histories serves the last 100 trades, oldest first (the docs' example), and nothing older. */
const historiesDepth = 100;

/**
 * Public endpoints share 2,000 weight per 30 s per IP and histories weighs 3: 666 requests (the
 * venue's "Rate Limit" page; its window is fixed from the first request, here it slides). Past it
 * HTTP 429 with {"code":"429000","msg":"Too Many Requests"} (as recorded in ccxt#16185).
 */
const kucoinRestLimit = { limit: 666, windowMs: 30_000 };
const rateLimited = { status: 429, body: { code: '429000', msg: 'Too Many Requests' } };

/** A printed trade as histories lists it: `sequence` (the websocket's tradeId), taker side, `time` in ns as a JSON number. */
const historyRow = (t: SimTrade) => ({ sequence: String(t.id), price: t.price, size: t.qty, side: t.side, time: t.time * 1_000_000 });

export function kucoinProtocol(server: SimVenueServer): VenueProtocol {
  // Looked up live: markets may be listed and delisted while the server runs.
  const market = (symbol: string) => server.listing.bySymbol.get(symbol);
  /** Tokens handed out by bullet-public; a socket without one is refused. The venue's expire; here the oldest unused go past 1,000. */
  const tokens = new Set<string>();
  const unusedTokensKept = 1_000;
  let issued = 0;
  const limit = new RestRateLimit(kucoinRestLimit.limit, kucoinRestLimit.windowMs);
  return {
    rest(url) {
      if (url.pathname === '/api/v1/market/histories') {
        if (!limit.take()) return rateLimited;
        const symbol = url.searchParams.get('symbol') ?? '';
        if (!market(symbol)) return { status: 200, body: { code: '400100', msg: 'symbol not exists' } };
        return ok(server.printed.latest(symbol, historiesDepth).reverse().map(historyRow));
      }
      if (url.pathname === '/api/v1/bullet-public') {
        const token = `simtoken${++issued}`;
        tokens.add(token);
        if (tokens.size > unusedTokensKept) tokens.delete(tokens.values().next().value!);
        return ok({ token, instanceServers: [{ endpoint: `${server.wsUrl}/`, encrypt: false, protocol: 'websocket', pingInterval: pingIntervalMs, pingTimeout: 10_000 }] });
      }
      if (url.pathname === '/api/v3/currencies') {
        // The currencies of the pairs listed here, with their full names (the venue lists every currency
        // it holds) and, for a made-up base, its SIMULATED token contract as an ERC20 chain.
        return ok(
          [...server.listing.currencies()].map(([currency, { name: fullName, contract: contractAddress }]) => {
            const chains = contractAddress ? [{ chainName: 'ERC20', chainId: 'eth', contractAddress, isDepositEnabled: true, isWithdrawEnabled: true }] : null;
            return { currency, name: currency, fullName, precision: 8, isMarginEnabled: false, isDebitEnabled: false, chains };
          }),
        );
      }
      if (url.pathname === '/api/v1/symbols') {
        return ok(
          server.listing.markets.map((m) => ({
            symbol: m.symbol,
            name: m.symbol,
            baseCurrency: m.base,
            quoteCurrency: m.quote,
            baseIncrement: (10 ** -m.qtyDecimals).toFixed(m.qtyDecimals),
            priceIncrement: m.tick.toFixed(m.priceDecimals),
            enableTrading: true,
          })),
        );
      }
      if (url.pathname === '/api/v1/market/orderbook/level2_100') {
        const m = market(url.searchParams.get('symbol') ?? '');
        if (!m) return { status: 200, body: { code: '400100', msg: 'symbol not exists' } };
        return ok({ time: Date.now(), sequence: String(m.updateId), bids: sortedLevels(m.bids, 'bid', 100), asks: sortedLevels(m.asks, 'ask', 100) });
      }
      return undefined;
    },
    open(client: SimClient) {
      const token = client.url.searchParams.get('token') ?? '';
      if (!tokens.delete(token)) {
        server.send(client, { id: client.url.searchParams.get('connectId') ?? '', type: 'error', code: 401, data: 'token is invalid' });
        client.socket.close(1008, 'token is invalid');
        return;
      }
      server.send(client, { id: client.url.searchParams.get('connectId') ?? '', type: 'welcome' });
    },
    message(client, text) {
      let request: { id?: unknown; type?: unknown; topic?: unknown; response?: unknown };
      try {
        request = JSON.parse(text);
      } catch {
        server.send(client, { id: '', type: 'error', code: 400, data: 'malformed request' });
        return;
      }
      const id = String(request.id ?? '');
      if (request.type === 'ping') return void server.send(client, { id, type: 'pong', timestamp: Date.now() * 1_000 });
      if (request.type !== 'subscribe' && request.type !== 'unsubscribe') return void server.send(client, { id, type: 'error', code: 400, data: `unknown type ${String(request.type)}` });
      const [channel, list] = String(request.topic).split(':');
      const symbols = (list ?? '').split(',').filter(Boolean);
      if ((channel !== '/market/match' && channel !== '/market/level2') || symbols.length === 0 || symbols.length > 100) {
        return void server.send(client, { id, type: 'error', code: 404, data: `topic ${String(request.topic)} is not found` });
      }
      const missing = symbols.find((s) => !market(s));
      if (missing !== undefined) return void server.send(client, { id, type: 'error', code: 404, data: `symbol ${missing} is not found` });
      for (const s of symbols) {
        if (request.type === 'subscribe') client.topics.add(`${channel}:${s}`);
        else client.topics.delete(`${channel}:${s}`);
      }
      if (request.response === true) server.send(client, { id, type: 'ack' });
    },
    publish(m, step, now) {
      for (const t of step.trades) {
        const data = { sequence: String(t.id), symbol: m.symbol, side: t.side, size: t.qty, price: t.price, tradeId: String(t.id), time: `${t.time}000000`, type: 'match' };
        if (server.publish(`/market/match:${m.symbol}`, () => ({ type: 'message', topic: `/market/match:${m.symbol}`, subject: 'trade.l3match', data }))) server.trades.push(t);
      }
      if (server.takeGap(m.symbol)) return;
      const { diff } = step;
      // Each change carries its own number, bids first, in the range the model advanced.
      let seq = diff.firstUpdateId;
      const number = (levels: [string, string][]) => levels.map(([p, q]) => [p, q, String(seq++)]);
      const changes = { bids: number(diff.bids), asks: number(diff.asks) };
      const data = { changes, sequenceStart: diff.firstUpdateId, sequenceEnd: diff.finalUpdateId, symbol: m.symbol, time: now };
      server.publish(`/market/level2:${m.symbol}`, () => ({ type: 'message', topic: `/market/level2:${m.symbol}`, subject: 'trade.l2update', data }));
    },
  };
}
