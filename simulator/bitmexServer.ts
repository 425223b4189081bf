// BitMEX's realtime websocket and instruments REST over the SIMULATED market model: trade,
// orderBookL2 (a partial, then rows inserted, updated and deleted by id), liquidation, text
// ping/pong, and the trade history (GET /api/v1/trade). The markets are inverse perpetuals (sizes in
// 1 USD contracts), plus a linear one the collector leaves out.
import { simulatedTickers, sortedLevels, type ListingFormat, type ListingSpec, type SimMarket, type SimTrade } from './market.ts';
import { pageSize, RestRateLimit } from './printedTrades.ts';
import type { SimClient, SimVenueServer, VenueProtocol } from './venueServer.ts';

/** BitMEX writes bitcoin as XBT. */
const venueTicker = (t: string) => (t === 'BTC' ? 'XBT' : t);

/** Inverse perpetuals in 1 USD contracts (XBTUSD). */
export const bitmexFormat: ListingFormat = {
  quotes: ['USD'],
  appetite: 1,
  market: (base, quote) => ({ symbol: `${base}${quote}`, base, quote, inverse: true, contractSize: 1, perpetual: true }),
};

export function bitmexListings(tickers: readonly string[] = simulatedTickers): ListingSpec[] {
  return [...tickers.map((t) => ({ ...bitmexFormat.market(venueTicker(t), 'USD'), asset: t })), { symbol: 'XBTUSDT', base: 'XBT', asset: 'BTC', quote: 'USDT', perpetual: true }];
}

/** GET /trade's `count`: 100 by default, 1000 at most (BitMEX swagger; ccxt's bitmex.ts). */
const tradeCount = { max: 1_000, default: 100 };

/**
 * 30 requests a minute without a key (BitMEX's REST page: "If you are not logged in, your
 * ratelimit is 30/1 minute", quoted in ccxt#5565); past it HTTP 429 and this body (as recorded in
 * BitMEX/easy-data-scripts#18).
 */
const bitmexRestLimit = { limit: 30, windowMs: 60_000 };
const rateLimited = { status: 429, body: { error: { message: 'Rate limit exceeded, retry in 1 seconds.', name: 'RateLimitError' } } };

/** A trade row, on the websocket and in the REST history alike: `side` the taker's, `size` in contracts. */
const tradeRow = (t: SimTrade) => ({ timestamp: new Date(t.time).toISOString(), symbol: t.symbol, side: t.side === 'buy' ? 'Buy' : 'Sell', size: Number(t.qty), price: Number(t.price), trdMatchID: String(t.id) });

/** One market's rows from startTime (included) to endTime, oldest first (newest first with reverse=true), skipping `start`, at most `count`. */
function tradePage(server: SimVenueServer, url: URL) {
  const param = (name: string) => url.searchParams.get(name);
  const from = param('startTime') === null ? -Infinity : Date.parse(param('startTime')!);
  const to = param('endTime') === null ? Infinity : Date.parse(param('endTime')!);
  const within = server.printed.of(param('symbol') ?? '').filter((t) => t.time >= from && t.time <= to);
  const ordered = param('reverse') === 'true' ? within.reverse() : within;
  const start = Math.max(0, Math.trunc(Number(param('start') ?? 0)) || 0);
  return ordered.slice(start, start + pageSize(param('count'), tradeCount.max, tradeCount.default)).map(tradeRow);
}

type Side = 'Buy' | 'Sell';
type Row = { symbol: string; id: number; side: Side; size?: number; price?: number; timestamp?: string };

export function bitmexProtocol(server: SimVenueServer): VenueProtocol {
  // Looked up live: markets list and delist while the server runs.
  const markets = server.listing.markets;
  const bySymbol = server.listing.bySymbol;
  /** Each market's range of row ids, numbered in listing order (a market listed later takes the next). */
  const ranges = new Map<SimMarket, number>(markets.map((m, i) => [m, i + 1]));
  const rangeOf = (m: SimMarket) => ranges.get(m) ?? ranges.set(m, ranges.size + 1).get(m)!;
  // Row ids derive from the price, as BitMEX's do; each market has its own range.
  const rowId = (m: SimMarket, price: string) => rangeOf(m) * 1e9 + Math.round(Number(price) / m.tick);
  /** The venue's book rows per market and side (prices), to tell inserts from updates; a market listed later starts from its first book. */
  const rows = new Map<SimMarket, { Buy: Set<string>; Sell: Set<string> }>();
  const startRows = (m: SimMarket) => void rows.set(m, { Buy: new Set(m.bids.keys()), Sell: new Set(m.asks.keys()) });
  markets.forEach(startRows);
  server.listing.onList(startRows);
  /** Markets whose next book step with an insert is to be lost (a skipped message is only visible through a row it introduced). */
  const pendingGaps = new Set<string>();

  const table = (name: string, action: string, data: unknown[], symbol?: string) => ({ table: name, action, ...(symbol ? { filter: { symbol } } : {}), data });
  const partialBook = (m: SimMarket) => {
    const iso = new Date().toISOString();
    const data: Row[] = [
      ...sortedLevels(m.asks, 'ask').map(([p, q]): Row => ({ symbol: m.symbol, id: rowId(m, p), side: 'Sell', size: Number(q), price: Number(p), timestamp: iso })),
      ...sortedLevels(m.bids, 'bid').map(([p, q]): Row => ({ symbol: m.symbol, id: rowId(m, p), side: 'Buy', size: Number(q), price: Number(p), timestamp: iso })),
    ];
    return { ...table('orderBookL2', 'partial', data, m.symbol), keys: ['symbol', 'id', 'side'] };
  };

  const reply = (client: SimClient, request: unknown, fields: object) => server.send(client, { ...fields, request });

  const limit = new RestRateLimit(bitmexRestLimit.limit, bitmexRestLimit.windowMs);
  return {
    rest(url) {
      if (url.pathname === '/api/v1/trade') return limit.take() ? { status: 200, body: tradePage(server, url) } : rateLimited;
      if (url.pathname !== '/api/v1/instrument/active') return undefined;
      const body = markets.map((m) => ({
        symbol: m.symbol,
        rootSymbol: m.base,
        state: 'Open',
        typ: 'FFWCSX',
        underlying: m.base,
        quoteCurrency: m.quote,
        isInverse: m.inverse,
        isQuanto: false,
        multiplier: m.inverse ? -100_000_000 : 1,
        underlyingToSettleMultiplier: m.inverse ? 100_000_000 : null,
        lotSize: 1,
        tickSize: m.tick,
      }));
      return { status: 200, body };
    },
    open(client) {
      server.send(client, { info: 'Welcome to the simulated BitMEX Realtime API.', version: 'sim', timestamp: new Date().toISOString(), docs: 'https://www.bitmex.com/app/wsAPI', limit: { remaining: 39 } });
    },
    message(client, text) {
      if (text === 'ping') return void server.send(client, 'pong');
      let request: { op?: unknown; args?: unknown };
      try {
        request = JSON.parse(text);
      } catch {
        return void server.send(client, { status: 400, error: 'Unable to parse request', meta: {} });
      }
      const { op } = request;
      const args = Array.isArray(request.args) ? request.args.map(String) : [];
      if (op !== 'subscribe' && op !== 'unsubscribe') return void reply(client, request, { status: 400, error: `Unknown op: ${String(op)}`, meta: {} });
      for (const arg of args) {
        const [name, symbol] = arg.split(':');
        const m = bySymbol.get(symbol ?? '');
        if (!m || (name !== 'trade' && name !== 'orderBookL2' && name !== 'liquidation')) {
          reply(client, request, { status: 400, error: `Unknown or expired table: ${arg}`, meta: {} });
          continue;
        }
        if (op === 'unsubscribe') {
          client.topics.delete(arg);
          reply(client, request, { success: true, unsubscribe: arg });
          continue;
        }
        client.topics.add(arg);
        reply(client, request, { success: true, subscribe: arg });
        // Every table starts with a partial: the book, and (here) no recent trades or liquidations.
        server.send(client, name === 'orderBookL2' ? partialBook(m) : { ...table(name, 'partial', [], symbol), keys: [] });
      }
    },
    publish(m, step) {
      for (const t of step.trades) {
        if (server.publish(`trade:${m.symbol}`, () => table('trade', 'insert', [tradeRow(t)]))) server.trades.push(t);
      }
      for (const l of step.liquidations) {
        const row = { orderID: `sim-liq-${m.symbol}-${l.time}-${l.price}`, symbol: m.symbol, side: l.positionSide === 'long' ? 'Sell' : 'Buy', price: Number(l.price), leavesQty: Number(l.qty) };
        if (server.publish(`liquidation:${m.symbol}`, () => table('liquidation', 'insert', [row]))) server.liquidations.push(l);
      }
      // The diff as BitMEX row actions, in order; consecutive rows of one action share a message.
      const held = rows.get(m)!;
      const messages: { action: string; data: Row[] }[] = [];
      let inserted = false;
      const add = (side: Side, [p, q]: [string, string]) => {
        const id = rowId(m, p);
        let action: string;
        let row: Row;
        if (q === '0') {
          held[side].delete(p);
          action = 'delete';
          row = { symbol: m.symbol, id, side };
        } else if (held[side].has(p)) {
          action = 'update';
          row = { symbol: m.symbol, id, side, size: Number(q) };
        } else {
          held[side].add(p);
          inserted = true;
          action = 'insert';
          row = { symbol: m.symbol, id, side, size: Number(q), price: Number(p) };
        }
        const last = messages.at(-1);
        if (last?.action === action) last.data.push(row);
        else messages.push({ action, data: [row] });
      };
      for (const level of step.diff.bids) add('Buy', level);
      for (const level of step.diff.asks) add('Sell', level);
      if (server.takeGap(m.symbol)) pendingGaps.add(m.symbol);
      if (pendingGaps.has(m.symbol) && inserted) {
        pendingGaps.delete(m.symbol);
        return;
      }
      for (const msg of messages) server.publish(`orderBookL2:${m.symbol}`, () => table('orderBookL2', msg.action, msg.data));
    },
  };
}
