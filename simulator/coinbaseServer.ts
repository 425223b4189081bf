// Coinbase Advanced Trade's market data websocket and public products REST over the SIMULATED
// market model. Every message to a client carries that client's next sequence_num. The Exchange
// API's trade history (`/products/{id}/trades`, served on the same loopback host) answers from the
// trades the venue printed, sent or not; its currency list (`/currencies`) gives a made-up base's
// SIMULATED token contract on the ethereum network.
import { simulatedTickers, sortedLevels, type ListingFormat, type ListingSpec, type SimMarket, type SimTrade } from './market.ts';
import { RestRateLimit } from './printedTrades.ts';
import type { SimClient, SimVenueServer, VenueProtocol } from './venueServer.ts';

export const coinbaseFormat: ListingFormat = { quotes: ['USD', 'USDT'], appetite: 3, market: (base, quote) => ({ symbol: `${base}-${quote}`, base, quote }) };

export function coinbaseListings(tickers: readonly string[] = simulatedTickers): ListingSpec[] {
  return [...tickers.map((t) => coinbaseFormat.market(t, 'USD')), { symbol: 'ETH-BTC', base: 'ETH', quote: 'BTC' }];
}

/** The currencies of the products listed here, as the Exchange API's GET /currencies: a contract on `ethereum` for a base that has one. */
function exchangeCurrencies(server: SimVenueServer) {
  return [...server.listing.currencies()].map(([id, c]) => ({
    id,
    name: c.name,
    status: 'online',
    details: { type: 'crypto' },
    default_network: c.contract ? 'ethereum' : id.toLowerCase(),
    supported_networks: [c.contract ? { id: 'ethereum', name: 'Ethereum', status: 'online', contract_address: c.contract } : { id: id.toLowerCase(), name: c.name, status: 'online', contract_address: null }],
  }));
}

const channels = new Set(['market_trades', 'level2', 'heartbeats']);

/** Public endpoints: 10 requests a second per IP (Exchange REST rate limits; the bursts of 15 it allows are not modelled). */
export const coinbaseHistoryLimit = { limit: 10, windowMs: 1_000 };
const tradesPageMax = 1_000;
const productTrades = /^\/products\/([^/]+)\/trades$/;

/** A trade as the Exchange API writes it: `side` is the maker's (the taker bought: a sell order was hit). */
const exchangeTradeRow = (t: SimTrade) => ({ time: new Date(t.time).toISOString(), trade_id: t.id, price: t.price, size: t.qty, side: t.side === 'buy' ? 'sell' : 'buy' });

/**
 * `GET /products/{id}/trades`, newest first, up to `limit` (at most 1000, the default). Cursors are
 * trade ids: `after` = older than it, `before` = newer than it; both bound a page between them.
 * `before` alone is the page right after it.
 */
function exchangeTrades(server: SimVenueServer, url: URL, limiter: RestRateLimit) {
  if (!limiter.take()) return { status: 429, body: { message: 'Public rate limit exceeded' } };
  const symbol = decodeURIComponent(productTrades.exec(url.pathname)![1]!);
  if (!server.listing.bySymbol.has(symbol)) return { status: 404, body: { message: 'NotFound' } };
  const q = (name: string) => (url.searchParams.has(name) ? Number(url.searchParams.get(name)) : undefined);
  const [after, before, asked] = [q('after'), q('before'), q('limit') ?? tradesPageMax];
  if ([after, before, asked].some((v) => v !== undefined && !Number.isSafeInteger(v))) return { status: 400, body: { message: 'Invalid pagination parameter' } };
  const limit = Math.min(Math.max(asked!, 1), tradesPageMax);
  let trades: SimTrade[];
  if (after !== undefined) trades = server.printed.beforeId(symbol, after, limit).filter((t) => before === undefined || t.id > before);
  else if (before !== undefined) trades = server.printed.afterId(symbol, before, limit).reverse();
  else trades = server.printed.latest(symbol, limit);
  return { status: 200, body: trades.map(exchangeTradeRow) };
}

export function coinbaseProtocol(server: SimVenueServer): VenueProtocol {
  // Looked up live: markets list and delist while the server runs.
  const bySymbol = server.listing.bySymbol;
  /** Recent trades per product, for the snapshot a market_trades subscription starts with. */
  const recent = new Map<string, unknown[]>();
  let heartbeatCounter = 0;
  let lastHeartbeat = 0;
  const historyLimit = new RestRateLimit(coinbaseHistoryLimit.limit, coinbaseHistoryLimit.windowMs);

  const envelope = (c: SimClient, channel: string, events: unknown[]) => ({
    channel,
    client_id: '',
    timestamp: new Date().toISOString(),
    sequence_num: c.sequence++,
    events,
  });
  const l2Updates = (levels: [string, string][], side: 'bid' | 'offer', time: string) =>
    levels.map(([price_level, new_quantity]) => ({ side, event_time: time, price_level, new_quantity }));
  const l2Snapshot = (m: SimMarket) => {
    const time = new Date().toISOString();
    return { type: 'snapshot', product_id: m.symbol, updates: [...l2Updates(sortedLevels(m.bids, 'bid'), 'bid', time), ...l2Updates(sortedLevels(m.asks, 'ask'), 'offer', time)] };
  };

  return {
    rest(url) {
      if (productTrades.test(url.pathname)) return exchangeTrades(server, url, historyLimit);
      if (url.pathname === '/currencies') return { status: 200, body: exchangeCurrencies(server) };
      if (url.pathname !== '/api/v3/brokerage/market/products') return undefined;
      const list = server.listing.markets.map((m) => ({
        product_id: m.symbol,
        price: '0',
        base_increment: (10 ** -m.qtyDecimals).toFixed(m.qtyDecimals),
        quote_increment: m.tick.toFixed(m.priceDecimals),
        base_currency_id: m.base,
        quote_currency_id: m.quote,
        base_name: m.baseName,
        quote_name: m.quoteName,
        status: 'online',
        trading_disabled: false,
        product_type: 'SPOT',
        alias: '',
        alias_to: [],
      }));
      return { status: 200, body: { products: list, num_products: list.length } };
    },
    message(client, text) {
      let request: { type?: unknown; product_ids?: unknown; channel?: unknown };
      try {
        request = JSON.parse(text);
      } catch {
        server.send(client, { type: 'error', message: 'failure to parse request' });
        return;
      }
      const channel = String(request.channel);
      if ((request.type !== 'subscribe' && request.type !== 'unsubscribe') || !channels.has(channel)) {
        server.send(client, { type: 'error', message: `unknown channel or type: ${channel}` });
        return;
      }
      const ids = Array.isArray(request.product_ids) ? request.product_ids.map(String) : [];
      const unknownId = ids.find((id) => !bySymbol.has(id));
      if (unknownId) {
        server.send(client, { type: 'error', message: `Failed to subscribe: product ${unknownId} not found` });
        return;
      }
      const topics = channel === 'heartbeats' ? ['heartbeats'] : ids.map((id) => `${channel}:${id}`);
      for (const t of topics) if (request.type === 'subscribe') client.topics.add(t);
      else client.topics.delete(t);
      const subscriptions: Record<string, string[]> = {};
      for (const t of client.topics) {
        const [ch, id] = t.split(':');
        (subscriptions[ch!] ??= []).push(...(id ? [id] : []));
      }
      server.send(client, envelope(client, 'subscriptions', [{ subscriptions }]));
      if (request.type !== 'subscribe') return;
      if (channel === 'level2') for (const id of ids) server.send(client, envelope(client, 'l2_data', [l2Snapshot(bySymbol.get(id)!)]));
      if (channel === 'market_trades') server.send(client, envelope(client, 'market_trades', [{ type: 'snapshot', trades: ids.flatMap((id) => recent.get(id) ?? []) }]));
    },
    tick(now) {
      if (now - lastHeartbeat < 1_000) return;
      lastHeartbeat = now;
      heartbeatCounter += 1;
      const current_time = new Date(now).toISOString();
      server.publish('heartbeats', (c) => envelope(c, 'heartbeats', [{ current_time, heartbeat_counter: heartbeatCounter }]));
    },
    publish(m, step) {
      if (step.trades.length > 0) {
        // Newest first, as the venue batches them.
        const trades = step.trades
          .map((t) => ({ trade_id: String(t.id), product_id: m.symbol, price: t.price, size: t.qty, side: t.side === 'buy' ? 'SELL' : 'BUY', time: new Date(t.time).toISOString() }))
          .reverse();
        recent.set(m.symbol, trades.slice(0, 5));
        if (server.publish(`market_trades:${m.symbol}`, (c) => envelope(c, 'market_trades', [{ type: 'update', trades }]))) server.trades.push(...step.trades);
      }
      const time = new Date().toISOString();
      const update = { type: 'update', product_id: m.symbol, updates: [...l2Updates(step.diff.bids, 'bid', time), ...l2Updates(step.diff.asks, 'offer', time)] };
      if (server.takeGap(m.symbol)) {
        // A lost message: its sequence number is used, the message never arrives.
        for (const c of server.clients) if (c.topics.has(`level2:${m.symbol}`)) c.sequence += 1;
        return;
      }
      server.publish(`level2:${m.symbol}`, (c) => envelope(c, 'l2_data', [update]));
    },
  };
}
