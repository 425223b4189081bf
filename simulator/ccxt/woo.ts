// WOO X's v2 public websocket (perpetuals), SIMULATED: https://docs.woox.io/#trade and #orderbook
// `{"id":"1","event":"subscribe","topic":"PERP_BTC_USDT@trade"}`; one message per trade, with no
// trade id and the taker side; `@orderbook` pushes the whole top of the book each time.
// `{"event":"ping"}` is answered `{"event":"pong"}`.
import type { Exchange } from 'ccxt';
import { sortedLevels } from '../market.ts';
import type { SimClient, SimVenueServer, VenueProtocol } from '../venueServer.ts';
import markets from './__fixtures__/woo.markets.json' with { type: 'json' };
import type { CcxtSimVenue } from './simulator.ts';

const depth = 100;
/** The venue sends prices and sizes as JSON numbers. */
const numeric = (levels: [string, string][]) => levels.map(([p, q]) => [Number(p), Number(q)]);

function wooProtocol(server: SimVenueServer): VenueProtocol {
  const bySymbol = new Map(server.listing.markets.map((m) => [m.symbol, m]));
  return {
    rest: () => undefined,
    message(client: SimClient, text: string) {
      let request: { id?: unknown; event?: unknown; topic?: unknown };
      try {
        request = JSON.parse(text);
      } catch {
        return void server.send(client, { event: 'error', success: false, errorMsg: 'invalid request' });
      }
      if (request.event === 'ping') return void server.send(client, { event: 'pong', ts: Date.now() });
      if (request.event === 'pong') return;
      const id = String(request.id ?? '');
      const [symbol, kind] = String(request.topic ?? '').split('@');
      const m = bySymbol.get(symbol ?? '');
      if ((request.event !== 'subscribe' && request.event !== 'unsubscribe') || !m || (kind !== 'trade' && kind !== 'orderbook'))
        return void server.send(client, { id, event: request.event, success: false, ts: Date.now(), errorMsg: `invalid topic ${String(request.topic)}` });
      const topic = `${m.symbol}@${kind}`;
      if (request.event === 'unsubscribe') client.topics.delete(topic);
      else client.topics.add(topic);
      server.send(client, { id, event: request.event, success: true, ts: Date.now() });
    },
    // No trade id on the wire: the ccxt collector derives one from the trade's content
    // (ingest/ccxtCollector.ts, `~<ts>-<side>-<price>-<amount>-<n>`, n = 0 unless equal trades share one read).
    storedTradeId: (t) => `~${t.time}-${t.side}-${Number(t.price)}-${Number(t.qty)}-0`,
    publish(m, step, now) {
      for (const t of step.trades) {
        const message = { topic: `${m.symbol}@trade`, ts: t.time, data: { symbol: m.symbol, price: Number(t.price), size: Number(t.qty), side: t.side.toUpperCase(), source: 0 } };
        if (server.publish(`${m.symbol}@trade`, () => message)) server.trades.push(t);
      }
      const book = { topic: `${m.symbol}@orderbook`, ts: now, data: { symbol: m.symbol, asks: numeric(sortedLevels(m.asks, 'ask', depth)), bids: numeric(sortedLevels(m.bids, 'bid', depth)) } };
      server.publish(`${m.symbol}@orderbook`, () => book);
    },
  };
}

export const woo: CcxtSimVenue = {
  ccxt: 'woo',
  markets,
  protocol: wooProtocol,
  pointAt(exchange: Exchange, wsUrl: string) {
    exchange.urls.api.ws.public = `${wsUrl}/ws/stream`;
  },
};
