// Bitfinex's websocket v2, pair-list and trades REST over the SIMULATED market model, for exchange
// pairs and perpetual futures: channels numbered per connection (chanId), trades (te then tu), P0
// books one level per message with checksums (conf flag 131072), the liq:global status feed,
// heartbeats; the trade history (trades/{symbol}/hist) at its rate limit.
import { bitfinexBookChecksum } from './checksums.ts';
import { simulatedTickers, sortedLevels, type ListingFormat, type ListingSpec, type SimMarket, type SimTrade } from './market.ts';
import { pageSize, RestRateLimit } from './printedTrades.ts';
import type { SimClient, SimVenueServer, VenueProtocol } from './venueServer.ts';

const OB_CHECKSUM = 131_072;

/** Pairs of two three-letter tickers are written together, longer ones with a colon (DOGE:USD). */
const pairName = (base: string, quote: string) => (base.length === 3 && quote.length === 3 ? `${base}${quote}` : `${base}:${quote}`);

/** Exchange pairs in USD (tBTCUSD, tDOGE:USD); perpetuals settled in USDT, which the venue writes UST (tBTCF0:USTF0). */
export const bitfinexFormats: Record<'exchange' | 'futures', ListingFormat> = {
  exchange: { quotes: ['USD'], appetite: 2, market: (base, quote) => ({ symbol: `t${pairName(base, quote)}`, base, quote }) },
  futures: { quotes: ['USDT'], appetite: 1, market: (base) => ({ symbol: `t${base}F0:USTF0`, base, quote: 'USDT', perpetual: true }) },
};

export function bitfinexListings(kind: 'exchange' | 'futures') {
  return (tickers: readonly string[] = simulatedTickers): ListingSpec[] => {
    const markets = tickers.map((t) => bitfinexFormats[kind].market(t, kind === 'exchange' ? 'USD' : 'USDT'));
    return kind === 'exchange' ? [...markets, { symbol: 'tETHBTC', base: 'ETH', quote: 'BTC' }] : markets;
  };
}

interface Connection {
  flags: number;
  nextChanId: number;
  /** Topic (trades:tBTCUSD, book:tBTCUSD, liq) -> channel number. */
  chanIds: Map<string, number>;
}

/** [ID, MTS, AMOUNT, PRICE], AMOUNT signed by the taker's side: a trade on the websocket and in the REST history alike. */
const tradeRow = (t: SimTrade) => [t.id, t.time, (t.side === 'buy' ? 1 : -1) * Number(t.qty), Number(t.price)];

/** trades/hist's `limit`: 125 by default, 10,000 at most (docs.bitfinex.com/reference/rest-public-trades). */
const tradesLimit = { max: 10_000, default: 125 };

/**
 * trades/hist takes 15 requests a minute (the endpoint's page); past it the IP is refused for 60 s
 * with HTTP 429 and ["error", 11010, "ratelimit: error"] (ccxt 4.5.84 bitfinex.js, handleErrors).
 */
const bitfinexRestLimit = { limit: 15, windowMs: 60_000, blockMs: 60_000 };
const rateLimited = { status: 429, body: ['error', 11010, 'ratelimit: error'] };

/** Rows of one market within [start, end] (MTS, both included), oldest first (sort=1) or newest first (the default), at most `limit`. */
function tradesPage(server: SimVenueServer, symbol: string, url: URL): number[][] {
  const param = (name: string) => url.searchParams.get(name);
  const start = Number(param('start') ?? 0);
  const end = Number(param('end') ?? Infinity);
  const limit = pageSize(param('limit'), tradesLimit.max, tradesLimit.default);
  const ascending = param('sort') === '1';
  const within = server.printed.of(symbol).filter((t) => t.time >= start && t.time <= end);
  return (ascending ? within.slice(0, limit) : within.slice(-limit).reverse()).map(tradeRow);
}

/** [PRICE, COUNT, AMOUNT]: asks carry negative amounts; COUNT 0 removes the level (AMOUNT 1 a bid, -1 an ask). */
const bookRow = (side: 'bid' | 'ask', [price, qty]: [string, string]): [number, number, number] => {
  const sign = side === 'bid' ? 1 : -1;
  return Number(qty) === 0 ? [Number(price), 0, sign] : [Number(price), 1, sign * Number(qty)];
};

/** The checksum the venue sends, over the [PRICE, AMOUNT] of the rows it publishes for its top 25 levels. */
function checksumOf(m: SimMarket): number {
  const rows = (side: 'bid' | 'ask') => sortedLevels(side === 'bid' ? m.bids : m.asks, side, 25).map((l) => bookRow(side, l)).map(([price, , amount]) => [price, amount] as const);
  return bitfinexBookChecksum(rows('bid'), rows('ask'));
}

/** A price of the step's changes within the top 25 the checksum covers, bids first; none if the step changed only deeper levels. */
function lostLevel(m: SimMarket, diff: { bids: [string, string][]; asks: [string, string][] }): { side: 'bid' | 'ask'; price: string } | undefined {
  for (const side of ['bid', 'ask'] as const) {
    const top = new Set(sortedLevels(side === 'bid' ? m.bids : m.asks, side, 25).map(([p]) => p));
    const price = (side === 'bid' ? diff.bids : diff.asks).find(([p]) => top.has(p))?.[0];
    if (price !== undefined) return { side, price };
  }
  return undefined;
}

export function bitfinexProtocol(server: SimVenueServer, kind: 'exchange' | 'futures'): VenueProtocol {
  // Looked up live: markets list and delist while the server runs.
  const bySymbol = server.listing.bySymbol;
  const connections = new WeakMap<SimClient, Connection>();
  const recentTrades = new Map<string, number[][]>();
  let lastHeartbeat = 0;
  let nextPositionId = 140_000_000;

  const connection = (c: SimClient) => {
    let state = connections.get(c);
    if (!state) connections.set(c, (state = { flags: 0, nextChanId: 17_000 + Math.floor(c.openedAt % 1_000), chanIds: new Map() }));
    return state;
  };
  const chanId = (c: SimClient, topic: string) => connection(c).chanIds.get(topic)!;
  const error = (c: SimClient, code: number, msg: string, extra: object = {}): void => {
    server.send(c, { event: 'error', msg, code, ...extra });
  };

  function subscribe(c: SimClient, request: Record<string, unknown>): void {
    const state = connection(c);
    const channel = String(request.channel);
    const symbol = String(request.symbol ?? '');
    const topic = channel === 'status' && request.key === 'liq:global' ? 'liq' : `${channel}:${symbol}`;
    if (topic === 'liq' ? kind !== 'futures' : (channel !== 'trades' && channel !== 'book') || !bySymbol.has(symbol)) {
      return error(c, 10300, 'subscribe: failed', { channel, symbol });
    }
    if (state.chanIds.has(topic)) return error(c, 10301, 'subscribe: dup', { channel, symbol });
    const id = state.nextChanId++;
    state.chanIds.set(topic, id);
    c.topics.add(topic);
    if (topic === 'liq') return void server.send(c, { event: 'subscribed', channel: 'status', chanId: id, key: 'liq:global' });
    const pair = symbol.slice(1);
    if (channel === 'trades') {
      server.send(c, { event: 'subscribed', channel, chanId: id, symbol, pair });
      server.send(c, [id, recentTrades.get(symbol) ?? []]);
      return;
    }
    server.send(c, { event: 'subscribed', channel, chanId: id, symbol, prec: request.prec ?? 'P0', freq: request.freq ?? 'F0', len: request.len ?? '25', pair });
    const m = bySymbol.get(symbol)!;
    const len = Number(request.len ?? 25);
    server.send(c, [id, [...sortedLevels(m.bids, 'bid', len).map((l) => bookRow('bid', l)), ...sortedLevels(m.asks, 'ask', len).map((l) => bookRow('ask', l))]]);
    if (state.flags & OB_CHECKSUM) server.send(c, [id, 'cs', checksumOf(m)]);
  }

  function unsubscribe(c: SimClient, id: unknown): void {
    const state = connection(c);
    const topic = [...state.chanIds].find(([, n]) => n === id)?.[0];
    if (topic === undefined) return error(c, 10400, 'unsubscribe: invalid');
    state.chanIds.delete(topic);
    c.topics.delete(topic);
    server.send(c, { event: 'unsubscribed', status: 'OK', chanId: id });
  }

  const limit = new RestRateLimit(bitfinexRestLimit.limit, bitfinexRestLimit.windowMs, bitfinexRestLimit.blockMs);
  const tradesHistory = (symbol: string, url: URL) => {
    if (!limit.take()) return rateLimited;
    // The venue's parameter error (code 10020, as it answers a bad `limit` on candles) for a symbol it does not list.
    if (!bySymbol.has(symbol)) return { status: 500, body: ['error', 10020, 'symbol: invalid'] };
    return { status: 200, body: tradesPage(server, symbol, url) };
  };

  return {
    rest(url) {
      const trades = /^\/v2\/trades\/([^/]+)\/hist$/.exec(url.pathname)?.[1];
      if (trades !== undefined) return tradesHistory(decodeURIComponent(trades), url);
      // Full names by currency code ([[["BTC", "Bitcoin"], ...]]): the codes of the pairs listed here.
      if (url.pathname === '/v2/conf/pub:map:currency:label') return { status: 200, body: [[...new Map(server.listing.markets.map((m) => [m.base, m.baseName]))]] };
      const match = /^\/v2\/conf\/pub:list:pair:(exchange|futures)$/.exec(url.pathname);
      if (!match) return undefined;
      const pairs = match[1] === kind ? server.listing.markets.map((m) => m.symbol.slice(1)) : [];
      return { status: 200, body: [pairs] };
    },
    open(client) {
      server.send(client, { event: 'info', version: 2, serverId: `sim-${client.openedAt.toString(16)}`, platform: { status: 1 } });
    },
    message(client, text) {
      let request: Record<string, unknown>;
      try {
        request = JSON.parse(text);
      } catch {
        return error(client, 10000, 'Unknown event');
      }
      switch (request.event) {
        case 'ping':
          return void server.send(client, { event: 'pong', ts: Date.now(), cid: request.cid });
        case 'conf':
          connection(client).flags = Number(request.flags) || 0;
          return void server.send(client, { event: 'conf', status: 'OK', flags: connection(client).flags });
        case 'subscribe':
          return subscribe(client, request);
        case 'unsubscribe':
          return unsubscribe(client, request.chanId);
        default:
          return error(client, 10000, 'Unknown event');
      }
    },
    tick(now) {
      if (now - lastHeartbeat < 15_000) return;
      lastHeartbeat = now;
      for (const c of server.clients) for (const id of connection(c).chanIds.values()) server.send(c, [id, 'hb']);
    },
    publish(m, step) {
      // AMOUNT signed by the taker's side; each trade comes as "te", then again as "tu".
      const rows = step.trades.map(tradeRow);
      if (rows.length > 0) recentTrades.set(m.symbol, rows.slice(-5));
      rows.forEach((row, i) => {
        const topic = `trades:${m.symbol}`;
        if (!server.publish(topic, (c) => [chanId(c, topic), 'te', row])) return;
        server.trades.push(step.trades[i]!);
        server.publish(topic, (c) => [chanId(c, topic), 'tu', row]);
      });
      for (const l of step.liquidations) {
        // AMOUNT is the position: positive a long, negative a short. The trigger (IS_MATCH 0), then its execution (1).
        const amount = (l.positionSide === 'long' ? 1 : -1) * Number(l.qty);
        const positionId = nextPositionId++;
        const row = (isMatch: number) => ['pos', positionId, l.time, null, m.symbol, amount, Number(l.price) * (l.positionSide === 'long' ? 1.01 : 0.99), null, isMatch, 1, null, Number(l.price)];
        if (server.publish('liq', (c) => [chanId(c, 'liq'), [row(0)]])) server.liquidations.push(l);
        server.publish('liq', (c) => [chanId(c, 'liq'), [row(1)]]);
      }
      const topic = `book:${m.symbol}`;
      // A lost message must show in the checksum: it takes every change of one price in the top 25.
      const lost = lostLevel(m, step.diff);
      const kept = (side: 'bid' | 'ask', levels: [string, string][]) => levels.filter(([p]) => !(lost?.side === side && p === lost.price));
      const skip = lost !== undefined && server.takeGap(m.symbol);
      const changes = [
        ...(skip ? kept('bid', step.diff.bids) : step.diff.bids).map((l) => bookRow('bid', l)),
        ...(skip ? kept('ask', step.diff.asks) : step.diff.asks).map((l) => bookRow('ask', l)),
      ];
      for (const row of changes) server.publish(topic, (c) => [chanId(c, topic), row]);
      const checksum = checksumOf(m);
      for (const c of server.clients) if (c.topics.has(topic) && connection(c).flags & OB_CHECKSUM) server.send(c, [chanId(c, topic), 'cs', checksum]);
    },
    reconnectNotice: () => ({ event: 'info', code: 20051, msg: 'Stop/Restart Websocket Server (please reconnect)' }),
  };
}
