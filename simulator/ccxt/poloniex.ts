// Poloniex's v3 public websocket (spot), SIMULATED: https://api-docs.poloniex.com/spot/websocket/market-data
// `{"event":"subscribe","channel":["trades"],"symbols":["BTC_USDT"]}`; `trades` pushes carry the
// taker side; `book_lv2` sends a snapshot, then updates (size "0" removes a level) chained by
// `lastId` = the previous `id`. `{"event":"ping"}` is answered `{"event":"pong"}`.
import type { Exchange } from 'ccxt';
import { sortedLevels, type SimMarket } from '../market.ts';
import type { SimClient, SimVenueServer, VenueProtocol } from '../venueServer.ts';
import markets from './__fixtures__/poloniex.markets.json' with { type: 'json' };
import type { CcxtSimVenue } from './simulator.ts';

function poloniexProtocol(server: SimVenueServer): VenueProtocol {
  const bySymbol = new Map(server.listing.markets.map((m) => [m.symbol, m]));
  const bookItem = (m: SimMarket, bids: [string, string][], asks: [string, string][], lastId: number, now: number) => ({
    symbol: m.symbol,
    createTime: now,
    asks,
    bids,
    lastId,
    id: m.updateId,
    ts: now,
  });
  return {
    rest: () => undefined,
    message(client: SimClient, text: string) {
      let request: { event?: unknown; channel?: unknown; symbols?: unknown };
      try {
        request = JSON.parse(text);
      } catch {
        return void server.send(client, { event: 'error', message: 'Invalid JSON' });
      }
      if (request.event === 'ping') return void server.send(client, { event: 'pong' });
      const channels = Array.isArray(request.channel) ? request.channel.map(String) : [];
      const symbols = Array.isArray(request.symbols) ? request.symbols.map(String) : [];
      if ((request.event !== 'subscribe' && request.event !== 'unsubscribe') || channels.length === 0)
        return void server.send(client, { event: 'error', message: `Invalid request ${text.slice(0, 80)}` });
      const unknown = channels.find((c) => c !== 'trades' && c !== 'book_lv2') ?? symbols.find((s) => !bySymbol.has(s));
      if (unknown !== undefined) return void server.send(client, { event: 'error', message: `Invalid channel value ["${unknown}"]` });
      for (const channel of channels) {
        for (const s of symbols) {
          if (request.event === 'unsubscribe') client.topics.delete(`${channel}:${s}`);
          else client.topics.add(`${channel}:${s}`);
        }
        server.send(client, { event: request.event, channel, symbols });
        if (request.event !== 'subscribe' || channel !== 'book_lv2') continue;
        const now = Date.now();
        for (const s of symbols) {
          const m = bySymbol.get(s)!;
          server.send(client, { channel: 'book_lv2', data: [bookItem(m, sortedLevels(m.bids, 'bid'), sortedLevels(m.asks, 'ask'), m.updateId - 1, now)], action: 'snapshot' });
        }
      }
    },
    publish(m, step, now) {
      const data = step.trades.map((t) => ({
        symbol: m.symbol,
        amount: (Number(t.price) * Number(t.qty)).toFixed(8),
        quantity: t.qty,
        takerSide: t.side,
        createTime: t.time,
        price: t.price,
        id: String(t.id),
        ts: t.time + 3,
      }));
      if (data.length > 0 && server.publish(`trades:${m.symbol}`, () => ({ channel: 'trades', data }))) server.trades.push(...step.trades);
      const { diff } = step;
      const update = { channel: 'book_lv2', data: [bookItem(m, diff.bids, diff.asks, diff.firstUpdateId - 1, now)], action: 'update' };
      server.publish(`book_lv2:${m.symbol}`, () => update);
    },
  };
}

export const poloniex: CcxtSimVenue = {
  ccxt: 'poloniex',
  markets,
  protocol: poloniexProtocol,
  pointAt(exchange: Exchange, wsUrl: string) {
    exchange.urls.api.ws.public = `${wsUrl}/ws/public`;
  },
};
