// Gate's spot websocket v4 and currency-pairs REST over the SIMULATED market model: spot.trades,
// spot.obu (a full book on subscription, then updates numbered U..u), spot.ping. The trade history
// (`/api/v4/spot/trades`) answers from the trades the venue printed, sent or not. Simulated trade ids
// count each pair's trades (the venue's are exchange-wide), so the rows leave out `sequence_id`.
import { simulatedTickers, sortedLevels, type ListingFormat, type ListingSpec, type SimMarket, type SimTrade } from './market.ts';
import { RestRateLimit } from './printedTrades.ts';
import type { SimClient, SimVenueServer, VenueProtocol } from './venueServer.ts';

export const gateFormat: ListingFormat = { quotes: ['USDT', 'USDC'], appetite: 10, market: (base, quote) => ({ symbol: `${base}_${quote}`, base, quote }) };

export function gateListings(tickers: readonly string[] = simulatedTickers): ListingSpec[] {
  return [...tickers.map((t) => gateFormat.market(t, 'USDT')), { symbol: 'ETH_BTC', base: 'ETH', quote: 'BTC' }];
}

const bookStream = /^ob\.(.+)\.(50|400)$/;

/** Public endpoints: 200 requests per 10 s each. */
export const gateHistoryLimit = { limit: 200, windowMs: 10_000 };
const tradesPageMax = 1_000;

const spotTradeRow = (t: SimTrade) => ({
  id: String(t.id),
  create_time: String(Math.floor(t.time / 1_000)),
  create_time_ms: `${t.time}.000000`,
  currency_pair: t.symbol,
  side: t.side,
  amount: t.qty,
  price: t.price,
});

/**
 * `GET /api/v4/spot/trades`, newest first, up to `limit` (100 by default, at most 1000): after
 * `last_id` (before it with `reverse=true`), else within `from`..`to` (seconds; `to` defaults to now),
 * else the latest. Trades past the venue's memory are simply not there.
 */
function spotTrades(server: SimVenueServer, url: URL, limiter: RestRateLimit) {
  if (!limiter.take()) return { status: 429, body: { label: 'TOO_MANY_REQUESTS', message: 'Request rate limit exceeded' } };
  const symbol = url.searchParams.get('currency_pair') ?? '';
  if (!server.listing.bySymbol.has(symbol)) return { status: 400, body: { label: 'INVALID_CURRENCY_PAIR', message: `Invalid currency pair: ${symbol}` } };
  const q = (name: string) => (url.searchParams.has(name) ? Number(url.searchParams.get(name)) : undefined);
  const [lastId, from, to, limit] = [q('last_id'), q('from'), q('to'), q('limit') ?? 100];
  if ([lastId, from, to, limit].some((v) => v !== undefined && !Number.isSafeInteger(v)) || limit < 1 || limit > tradesPageMax) {
    return { status: 400, body: { label: 'INVALID_PARAM_VALUE', message: 'Invalid request parameter' } };
  }
  let trades: SimTrade[];
  if (lastId !== undefined) {
    trades = url.searchParams.get('reverse') === 'true' ? server.printed.beforeId(symbol, lastId, limit) : server.printed.afterId(symbol, lastId, limit).reverse();
  } else if (from !== undefined || to !== undefined) {
    const inRange = server.printed.between(symbol, (from ?? 0) * 1_000, to === undefined ? Infinity : (to + 1) * 1_000, Infinity);
    trades = inRange.slice(-limit).reverse();
  } else trades = server.printed.latest(symbol, limit);
  return { status: 200, body: trades.map(spotTradeRow) };
}

/**
 * The currencies of the pairs listed here, as GET /api/v4/spot/currencies writes them: a made-up
 * base's SIMULATED token contract on the chain `ETH`; no chains for the others.
 */
function spotCurrencies(server: SimVenueServer) {
  return [...server.listing.currencies()].map(([currency, c]) => ({
    currency,
    name: c.name,
    delisted: false,
    withdraw_disabled: false,
    withdraw_delayed: false,
    deposit_disabled: false,
    trade_disabled: false,
    chain: c.contract ? 'ETH' : currency,
    chains: c.contract ? [{ name: 'ETH', addr: c.contract, withdraw_disabled: false, withdraw_delayed: false, deposit_disabled: false }] : [],
  }));
}

export function gateProtocol(server: SimVenueServer): VenueProtocol {
  // Looked up live: markets list and delist while the server runs.
  const bySymbol = server.listing.bySymbol;
  const connId = (c: SimClient) => `sim${c.openedAt.toString(16)}`;
  const times = () => ({ time: Math.floor(Date.now() / 1_000), time_ms: Date.now() });
  const historyLimit = new RestRateLimit(gateHistoryLimit.limit, gateHistoryLimit.windowMs);

  const fullBook = (m: SimMarket, levels: number) => ({
    channel: 'spot.obu',
    result: { t: Date.now(), full: true, s: `ob.${m.symbol}.${levels}`, u: m.updateId, b: sortedLevels(m.bids, 'bid', levels), a: sortedLevels(m.asks, 'ask', levels) },
    time_ms: Date.now(),
    event: 'update',
  });

  return {
    rest(url) {
      if (url.pathname === '/api/v4/spot/trades') return spotTrades(server, url, historyLimit);
      if (url.pathname === '/api/v4/spot/currencies') return { status: 200, body: spotCurrencies(server) };
      if (url.pathname !== '/api/v4/spot/currency_pairs') return undefined;
      const body = server.listing.markets.map((m) => ({
        id: m.symbol,
        base: m.base,
        base_name: m.baseName,
        quote: m.quote,
        quote_name: m.quoteName,
        fee: '0.2',
        amount_precision: m.qtyDecimals,
        precision: m.priceDecimals,
        trade_status: 'tradable',
        type: 'normal',
      }));
      return { status: 200, body };
    },
    message(client, text) {
      let request: { channel?: unknown; event?: unknown; payload?: unknown };
      try {
        request = JSON.parse(text);
      } catch {
        server.send(client, { ...times(), channel: '', event: '', error: { code: 1, message: 'invalid argument' }, result: null });
        return;
      }
      const channel = String(request.channel);
      if (channel === 'spot.ping') {
        server.send(client, { ...times(), channel: 'spot.pong', event: '', result: null });
        return;
      }
      const event = request.event;
      const payload = Array.isArray(request.payload) ? request.payload.map(String) : [];
      const reply = (error?: string) =>
        server.send(client, { ...times(), conn_id: connId(client), channel, event, payload, ...(error ? { error: { code: 2, message: error }, result: null } : { result: { status: 'success' } }) });
      if ((event !== 'subscribe' && event !== 'unsubscribe') || (channel !== 'spot.trades' && channel !== 'spot.obu')) return void reply(`unknown channel ${channel}`);
      const pairOf = (p: string) => (channel === 'spot.obu' ? bookStream.exec(p)?.[1] : p);
      const unknownPair = payload.find((p) => !bySymbol.has(pairOf(p) ?? ''));
      if (unknownPair !== undefined) return void reply(`unknown currency pair ${unknownPair}`);
      // Books by stream (ob.BTC_USDT.50), trades by pair.
      const topics = payload.map((p) => `${channel}:${p}`);
      if (event === 'unsubscribe') {
        for (const t of topics) client.topics.delete(t);
        return void reply();
      }
      // Only one subscription per book stream and connection.
      const duplicate = channel === 'spot.obu' ? payload.find((p, i) => client.topics.has(topics[i]!)) : undefined;
      if (duplicate !== undefined) return void reply(`Alert sub ${duplicate}`);
      for (const t of topics) client.topics.add(t);
      reply();
      // A book stream starts with the full book.
      if (channel === 'spot.obu') for (const p of payload) server.send(client, fullBook(bySymbol.get(pairOf(p)!)!, Number(bookStream.exec(p)![2])));
    },
    publish(m, step, now) {
      for (const t of step.trades) {
        const result = { id: t.id, create_time: Math.floor(t.time / 1_000), create_time_ms: `${t.time}.0`, side: t.side, currency_pair: m.symbol, amount: t.qty, price: t.price };
        if (server.publish(`spot.trades:${m.symbol}`, () => ({ ...times(), channel: 'spot.trades', event: 'update', result }))) server.trades.push(t);
      }
      if (server.takeGap(m.symbol)) return;
      const { diff } = step;
      // The model's book has 50 levels a side: the 50- and 400-level streams carry the same changes.
      for (const stream of [`ob.${m.symbol}.50`, `ob.${m.symbol}.400`]) {
        const update = { channel: 'spot.obu', result: { t: now, s: stream, U: diff.firstUpdateId, u: diff.finalUpdateId, b: diff.bids, a: diff.asks }, time_ms: Date.now(), event: 'update' };
        server.publish(`spot.obu:${stream}`, () => update);
      }
    },
  };
}
