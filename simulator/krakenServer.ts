// Kraken spot websocket v2 over the SIMULATED market model: instrument, trade and book channels,
// checksums, heartbeats. Prices and quantities go out as JSON numbers, as Kraken sends them. The REST
// trade history (`/0/public/Trades`, pairs under their REST names) answers from the trades the
// venue printed, sent or not.
import { krakenBookChecksum } from './checksums.ts';
import { simulatedTickers, sortedLevels, type ListingFormat, type ListingSpec, type SimMarket, type SimTrade } from './market.ts';
import { RestRateLimit } from './printedTrades.ts';
import type { SimClient, SimVenueServer, VenueProtocol } from './venueServer.ts';

export const krakenFormat: ListingFormat = { quotes: ['USD', 'USDT'], appetite: 3, market: (base, quote) => ({ symbol: `${base}/${quote}`, base, quote }) };

export function krakenListings(tickers: readonly string[] = simulatedTickers): ListingSpec[] {
  return [...tickers.map((t) => krakenFormat.market(t, 'USD')), { symbol: 'ETH/BTC', base: 'ETH', quote: 'BTC' }];
}

const levels = (raw: [string, string][]) => raw.map(([price, qty]) => ({ price: Number(price), qty: Number(qty) }));

/** The checksum the venue sends, over its own top 10 levels, in its strings at the pair's precision. */
const checksumOf = (m: SimMarket) => krakenBookChecksum(sortedLevels(m.bids, 'bid', 10), sortedLevels(m.asks, 'ask', 10));

function touchesTop10(m: SimMarket, bids: [string, string][], asks: [string, string][]): boolean {
  const bidFloor = Number(sortedLevels(m.bids, 'bid', 10).at(-1)?.[0] ?? Infinity);
  const askCeiling = Number(sortedLevels(m.asks, 'ask', 10).at(-1)?.[0] ?? -Infinity);
  return bids.some(([p]) => Number(p) >= bidFloor) || asks.some(([p]) => Number(p) <= askCeiling);
}

/** Kraken's own names: REST keeps the legacy asset codes (XBT, XDG) where websocket v2 uses ISO ones. */
const restCodes: Record<string, string> = { BTC: 'XBT', DOGE: 'XDG' };
/** A pair's REST `altname` (what `pair=` takes) and the id its result is keyed by (XXBTZUSD for the oldest pairs). */
const altname = (m: SimMarket) => `${restCodes[m.base] ?? m.base}${restCodes[m.quote] ?? m.quote}`;
const pairIds: Record<string, string> = { XBTUSD: 'XXBTZUSD', ETHUSD: 'XETHZUSD', XRPUSD: 'XXRPZUSD', ETHXBT: 'XETHXXBT' };

/** Public calls: a live probe held 1 a second (its burst of about 30 rapid ones is not modelled). */
export const krakenHistoryLimit = { limit: 1, windowMs: 1_000 };
const tradesPageMax = 1_000;
const nanos = (ms: number) => BigInt(ms) * 1_000_000n;

/** A REST row: price and volume at the pair's decimals, time in seconds, taker side, order type, misc, trade id. */
const restRow = (t: SimTrade) => [t.price, t.qty, t.time / 1_000, t.side === 'buy' ? 'b' : 's', 'm', '', t.id];

/**
 * `GET /0/public/Trades?pair&since&count`: the trades after `since` (nanoseconds, or seconds for a
 * short number), oldest first, up to `count` (1000 at most and by default), with `last` to continue
 * from. A throttled or unknown request is answered 200 with an error, as Kraken does.
 */
function recentTrades(server: SimVenueServer, url: URL, limiter: RestRateLimit) {
  if (!limiter.take()) return { status: 200, body: { error: ['EGeneral:Too many requests'] } };
  const pair = url.searchParams.get('pair') ?? '';
  const market = server.listing.markets.find((m) => altname(m) === pair);
  if (!market) return { status: 200, body: { error: ['EQuery:Unknown asset pair'] } };
  const since = url.searchParams.get('since') ?? '0';
  const count = url.searchParams.has('count') ? Number(url.searchParams.get('count')) : tradesPageMax;
  if (!/^\d{1,20}$/.test(since) || !Number.isSafeInteger(count)) return { status: 200, body: { error: ['EGeneral:Invalid arguments'] } };
  const sinceNs = since.length > 11 ? BigInt(since) : BigInt(since) * 1_000_000_000n;
  // Simulated times are whole milliseconds: after `since` is from the next millisecond on.
  const rows = server.printed.between(market.symbol, Number(sinceNs / 1_000_000n) + 1, Infinity, Math.min(Math.max(count, 1), tradesPageMax));
  const last = rows.length > 0 ? String(nanos(rows.at(-1)!.time)) : since;
  return { status: 200, body: { error: [], result: { [pairIds[pair] ?? pair]: rows.map(restRow), last } } };
}

export function krakenProtocol(server: SimVenueServer): VenueProtocol {
  // Looked up live: markets list and delist while the server runs.
  const bySymbol = server.listing.bySymbol;
  let lastHeartbeat = 0;
  const historyLimit = new RestRateLimit(krakenHistoryLimit.limit, krakenHistoryLimit.windowMs);
  const times = () => {
    const now = new Date().toISOString();
    return { time_in: now, time_out: now };
  };
  const instruments = () => ({
    channel: 'instrument',
    type: 'snapshot',
    data: {
      assets: [],
      pairs: server.listing.markets.map((m) => ({
        symbol: m.symbol,
        base: m.base,
        quote: m.quote,
        status: 'online',
        qty_precision: m.qtyDecimals,
        qty_increment: 10 ** -m.qtyDecimals,
        price_precision: m.priceDecimals,
        price_increment: m.tick,
        marginable: false,
      })),
    },
  });

  function subscribe(client: SimClient, method: 'subscribe' | 'unsubscribe', params: Record<string, unknown>, reqId: unknown): void {
    const channel = String(params.channel);
    if (channel === 'instrument') {
      server.send(client, { method, result: { channel }, success: true, req_id: reqId, ...times() });
      if (method === 'subscribe') server.send(client, instruments());
      return;
    }
    const symbols = Array.isArray(params.symbol) ? params.symbol.map(String) : [];
    for (const symbol of symbols) {
      const m = bySymbol.get(symbol);
      if (!m || (channel !== 'trade' && channel !== 'book')) {
        server.send(client, { error: `Currency pair not supported ${symbol}`, method, success: false, symbol, req_id: reqId, ...times() });
        continue;
      }
      const topic = `${channel}:${symbol}`;
      server.send(client, { method, result: { channel, symbol, ...(channel === 'book' ? { depth: params.depth ?? 10, snapshot: true } : { snapshot: false }) }, success: true, req_id: reqId, ...times() });
      if (method === 'unsubscribe') {
        client.topics.delete(topic);
        continue;
      }
      client.topics.add(topic);
      if (channel === 'book') {
        const depth = Number(params.depth ?? 10);
        const snapshot = { symbol, bids: levels(sortedLevels(m.bids, 'bid', depth)), asks: levels(sortedLevels(m.asks, 'ask', depth)), checksum: checksumOf(m) };
        server.send(client, { channel: 'book', type: 'snapshot', data: [snapshot] });
      }
    }
  }

  return {
    rest: (url) => (url.pathname === '/0/public/Trades' ? recentTrades(server, url, historyLimit) : undefined),
    message(client, text) {
      let request: { method?: unknown; params?: unknown; req_id?: unknown };
      try {
        request = JSON.parse(text);
      } catch {
        server.send(client, { error: 'Malformed request', success: false, ...times() });
        return;
      }
      if (request.method === 'ping') {
        server.send(client, { method: 'pong', req_id: request.req_id, ...times() });
        return;
      }
      if ((request.method !== 'subscribe' && request.method !== 'unsubscribe') || typeof request.params !== 'object' || request.params === null) {
        server.send(client, { error: 'Method not found', method: request.method, success: false, req_id: request.req_id, ...times() });
        return;
      }
      subscribe(client, request.method, request.params as Record<string, unknown>, request.req_id);
    },
    tick(now) {
      if (now - lastHeartbeat < 1_000) return;
      lastHeartbeat = now;
      for (const c of server.clients) if (c.topics.size > 0) server.send(c, { channel: 'heartbeat' });
    },
    publish(m, step) {
      const trades = step.trades.map((t) => ({ symbol: m.symbol, side: t.side, price: Number(t.price), qty: Number(t.qty), ord_type: 'market', trade_id: t.id, timestamp: new Date(t.time).toISOString() }));
      if (trades.length > 0 && server.publish(`trade:${m.symbol}`, () => ({ channel: 'trade', type: 'update', data: trades }))) server.trades.push(...step.trades);
      const { diff } = step;
      // Only the top 10 is checksummed: a lost update shows once it touched them, so that is the one lost.
      if (touchesTop10(m, diff.bids, diff.asks) && server.takeGap(m.symbol)) return;
      const update = { symbol: m.symbol, bids: levels(diff.bids), asks: levels(diff.asks), checksum: checksumOf(m), timestamp: new Date().toISOString() };
      server.publish(`book:${m.symbol}`, () => ({ channel: 'book', type: 'update', data: [update] }));
    },
  };
}
