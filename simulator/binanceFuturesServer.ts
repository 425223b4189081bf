// Binance USD-M futures' routed market streams (/public for depth, /market for trades and
// liquidations) and REST API over the SIMULATED market model.
import { binanceStreamRequests, depthSnapshot } from './binanceServer.ts';
import { simulatedTickers, type ListingSpec } from './market.ts';
import type { SimVenueServer, VenueProtocol } from './venueServer.ts';

/** Tiny-priced assets trade per 1000 units on Binance futures (1000PEPEUSDT). */
const perThousand = new Set(['PEPE', 'SHIB']);

export function binanceFuturesListings(tickers: readonly string[] = simulatedTickers): ListingSpec[] {
  return tickers.map((t) =>
    perThousand.has(t)
      ? { symbol: `1000${t}USDT`, base: `1000${t}`, quote: 'USDT', unit: 1000, perpetual: true }
      : { symbol: `${t}USDT`, base: t, quote: 'USDT', perpetual: true },
  );
}

export function binanceFuturesProtocol(server: SimVenueServer): VenueProtocol {
  const bySymbol = new Map(server.listing.markets.map((m) => [m.symbol, m]));
  // A stream subscribed on the wrong route is accepted and never served, as on the venue.
  const streams = binanceStreamRequests(server, (c) => (c.url.pathname.startsWith('/market') ? 'market' : c.url.pathname.startsWith('/public') ? 'public' : 'legacy'));
  /** The venue pushes at most one liquidation per symbol per second. */
  const lastLiquidationAt = new Map<string, number>();
  return {
    rest(url) {
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
