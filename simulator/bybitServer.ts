// Bybit v5's public websocket (spot or linear category), instruments and recent-trade REST over
// the SIMULATED market model.
import { simulatedTickers, sortedLevels, type ListingFormat, type ListingSpec, type SimMarket, type SimTrade } from './market.ts';
import { pageSize, RestRateLimit } from './printedTrades.ts';
import type { SimClient, SimVenueServer, VenueProtocol } from './venueServer.ts';

/** Bybit writes the multiple after the ticker for a few per-1000 contracts (SHIB1000USDT), before it for the rest (1000PEPEUSDT). */
const multipleAfter = new Set(['SHIB']);

export const bybitFormats: Record<'spot' | 'linear', ListingFormat> = {
  spot: { quotes: ['USDT', 'USDC'], appetite: 7, market: (base, quote) => ({ symbol: `${base}${quote}`, base, quote }) },
  linear: {
    // USDC perpetuals are named apart (BTCPERP): the simulated ones are USDT's.
    quotes: ['USDT'],
    appetite: 6,
    market: (base, quote) => ({ symbol: `${base}${quote}`, base, quote, perpetual: true }),
    scaled(ticker, unit) {
      const base = multipleAfter.has(ticker) ? `${ticker}${unit}` : `${unit}${ticker}`;
      return { symbol: `${base}USDT`, base, quote: 'USDT', unit, perpetual: true, asset: ticker };
    },
  },
};

export function bybitListings(category: 'spot' | 'linear') {
  return (tickers: readonly string[] = simulatedTickers): ListingSpec[] => tickers.map((t) => bybitFormats[category].market(t, 'USDT'));
}

/** Spot takes at most 10 arguments per request. */
const maxArgs = { spot: 10, linear: 500 } as const;

/** recent-trade's `limit`: spot [1, 60], default 60; linear [1, 1000], default 500 (docs/v5/market/recent-trade.mdx). */
const recentTradeLimit = { spot: { max: 60, default: 60 }, linear: { max: 1_000, default: 500 } } as const;

/**
 * Bybit's IP limit: 600 requests in any 5 s; past it HTTP 403 ("access too frequent"), and the
 * client must stay away 10 minutes (docs/v5/rate-limit/rate-limit.mdx). Counted here on
 * recent-trade alone: the other routes are asked a few times per start.
 */
const bybitRestLimit = { limit: 600, windowMs: 5_000, blockMs: 600_000 };

/**
 * instruments-info's pages: `limit` [1, 1000], 500 by default, and `nextPageCursor` to the next page
 * (docs/v5/market/instrument.mdx); spot answers every pair at once. The venue's cursor is opaque;
 * here it is the offset.
 */
function instrumentsPage(markets: readonly SimMarket[], category: 'spot' | 'linear', url: URL): { page: readonly SimMarket[]; nextPageCursor: string } {
  if (category === 'spot') return { page: markets, nextPageCursor: '' };
  const from = Math.max(0, Number(url.searchParams.get('cursor') ?? 0) || 0);
  const end = from + pageSize(url.searchParams.get('limit'), 1_000, 500);
  return { page: markets.slice(from, end), nextPageCursor: end < markets.length ? String(end) : '' };
}

/** A printed trade as recent-trade lists it: the websocket's id (execId is its `i`), price, size, taker side and time. */
const recentTrade = (t: SimTrade) => ({
  execId: String(t.id),
  symbol: t.symbol,
  price: t.price,
  size: t.qty,
  side: t.side === 'buy' ? 'Buy' : 'Sell',
  time: String(t.time),
  isBlockTrade: false,
  isRPITrade: false,
});

export function bybitProtocol(server: SimVenueServer, category: 'spot' | 'linear'): VenueProtocol {
  // Looked up live: markets list and delist while the server runs.
  const bySymbol = server.listing.bySymbol;
  /** The orderbook topic's update id per market: +1 per message, sent or skipped; a market listed later starts at its listing. */
  const updateIds = new Map<string, number>();
  const startUpdateId = (m: SimMarket) => void updateIds.set(m.symbol, 1_000 + (m.updateId % 100_000));
  server.listing.markets.forEach(startUpdateId);
  server.listing.onList(startUpdateId);
  const connId = (c: SimClient) => `sim-${c.openedAt.toString(36)}`;

  const snapshot = (m: SimMarket, now: number) => ({
    topic: `orderbook.50.${m.symbol}`,
    type: 'snapshot',
    ts: now,
    data: { s: m.symbol, b: sortedLevels(m.bids, 'bid', 50), a: sortedLevels(m.asks, 'ask', 50), u: updateIds.get(m.symbol)!, seq: m.updateId },
    cts: now,
  });

  const limit = new RestRateLimit(bybitRestLimit.limit, bybitRestLimit.windowMs, bybitRestLimit.blockMs);
  /** The market's latest printed trades, newest first, as many as asked within the category's bounds; nothing older, no cursor. */
  const recentTrades = (url: URL) => {
    if (!limit.take()) return { status: 403, body: 'access too frequent' };
    const symbol = url.searchParams.get('symbol') ?? '';
    if (url.searchParams.get('category') !== category || !bySymbol.has(symbol)) {
      return { status: 200, body: { retCode: 10001, retMsg: 'Request parameter error', result: {}, retExtInfo: {}, time: Date.now() } };
    }
    const bounds = recentTradeLimit[category];
    const list = server.printed.latest(symbol, pageSize(url.searchParams.get('limit'), bounds.max, bounds.default)).map(recentTrade);
    return { status: 200, body: { retCode: 0, retMsg: 'OK', result: { category, list }, retExtInfo: {}, time: Date.now() } };
  };

  return {
    rest(url) {
      if (url.pathname === '/v5/market/recent-trade') return recentTrades(url);
      if (url.pathname !== '/v5/market/instruments-info') return undefined;
      const asked = url.searchParams.get('category');
      const { page, nextPageCursor } = instrumentsPage(asked === category ? server.listing.markets : [], category, url);
      const list = page.map((m) => ({
        symbol: m.symbol,
        ...(category === 'linear' ? { contractType: 'LinearPerpetual', settleCoin: m.quote } : {}),
        status: 'Trading',
        baseCoin: m.base,
        quoteCoin: m.quote,
        priceFilter: { tickSize: m.tick.toFixed(m.priceDecimals) },
      }));
      return { status: 200, body: { retCode: 0, retMsg: 'OK', result: { category: asked, list, nextPageCursor }, time: Date.now() } };
    },
    message(client, text) {
      let request: { op?: unknown; args?: unknown; req_id?: unknown };
      try {
        request = JSON.parse(text);
      } catch {
        server.send(client, { success: false, ret_msg: 'error:invalid json', conn_id: connId(client), op: '' });
        return;
      }
      const reply = (success: boolean, retMsg: string) =>
        server.send(client, { success, ret_msg: retMsg, conn_id: connId(client), ...(request.req_id === undefined ? {} : { req_id: request.req_id }), op: request.op });
      if (request.op === 'ping') return void reply(true, 'pong');
      if ((request.op !== 'subscribe' && request.op !== 'unsubscribe') || !Array.isArray(request.args)) return void reply(false, `error:unknown op ${String(request.op)}`);
      const args = request.args.map(String);
      if (args.length > maxArgs[category]) return void reply(false, `error:args size >${maxArgs[category]}`);
      const unknownArg = args.find((a) => !bySymbol.has(a.split('.').at(-1)!) || !/^(publicTrade|orderbook\.50|allLiquidation)\./.test(a));
      if (unknownArg) return void reply(false, `error:handler not found,topic:${unknownArg}`);
      if (request.op === 'unsubscribe') {
        for (const a of args) client.topics.delete(a);
        return void reply(true, '');
      }
      for (const a of args) client.topics.add(a);
      reply(true, '');
      const now = Date.now();
      for (const a of args) if (a.startsWith('orderbook.')) server.send(client, snapshot(bySymbol.get(a.split('.').at(-1)!)!, now));
    },
    publish(m, step, now) {
      const trades = step.trades.map((t) => ({ T: t.time, s: m.symbol, S: t.side === 'buy' ? 'Buy' : 'Sell', v: t.qty, p: t.price, L: 'ZeroPlusTick', i: String(t.id), BT: false, RPI: false, seq: m.updateId }));
      const tradeMessage = { topic: `publicTrade.${m.symbol}`, type: 'snapshot', ts: now, data: trades };
      if (trades.length > 0 && server.publish(`publicTrade.${m.symbol}`, () => tradeMessage)) server.trades.push(...step.trades);
      // Every liquidation, with the side of the position: Buy = a long was liquidated.
      const liquidations = step.liquidations.map((l) => ({ T: l.time, s: m.symbol, S: l.positionSide === 'long' ? 'Buy' : 'Sell', v: l.qty, p: l.price }));
      const liquidationMessage = { topic: `allLiquidation.${m.symbol}`, type: 'snapshot', ts: now, data: liquidations };
      if (liquidations.length > 0 && server.publish(`allLiquidation.${m.symbol}`, () => liquidationMessage)) server.liquidations.push(...step.liquidations);
      const u = updateIds.get(m.symbol)! + 1;
      updateIds.set(m.symbol, u);
      if (server.takeGap(m.symbol)) return;
      const { diff } = step;
      const delta = { topic: `orderbook.50.${m.symbol}`, type: 'delta', ts: now, data: { s: m.symbol, b: diff.bids, a: diff.asks, u, seq: diff.finalUpdateId }, cts: now };
      server.publish(`orderbook.50.${m.symbol}`, () => delta);
    },
  };
}
