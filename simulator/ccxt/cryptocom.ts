// Crypto.com Exchange v1 market websocket, SIMULATED: https://exchange-docs.crypto.com/exchange/v1/rest-ws/index.html#book-instrument_name
// `{"method":"subscribe","params":{"channels":["trade.BTC_USDT","book.BTC_USDT.50"]}}`; data arrive
// as `{"method":"subscribe","result":{"subscription","channel","instrument_name","data":[...]}}`.
// Books (SNAPSHOT_AND_UPDATE): channel `book` then `book.update`, each update's `pu` the previous `u`.
import type { Exchange } from 'ccxt';
import { sortedLevels, type SimMarket } from '../market.ts';
import type { SimClient, SimVenueServer, VenueProtocol } from '../venueServer.ts';
import markets from './__fixtures__/cryptocom.markets.json' with { type: 'json' };
import type { CcxtSimVenue } from './simulator.ts';

const depth = 50;
/** Levels as the venue sends them: [price, size, number of orders], strings. */
const levels = (raw: [string, string][]) => raw.map(([p, q]) => [p, q, q === '0' ? '0' : '1']);

function cryptocomProtocol(server: SimVenueServer): VenueProtocol {
  const bySymbol = new Map(server.listing.markets.map((m) => [m.symbol, m]));
  const push = (m: SimMarket, subscription: string, channel: string, data: unknown[]) => ({
    id: -1,
    method: 'subscribe',
    code: 0,
    result: { instrument_name: m.symbol, subscription, channel, ...(channel.startsWith('book') ? { depth } : {}), data },
  });
  let lastHeartbeat = Date.now();
  const snapshot = (m: SimMarket, now: number) =>
    push(m, `book.${m.symbol}.${depth}`, 'book', [
      { bids: levels(sortedLevels(m.bids, 'bid', depth)), asks: levels(sortedLevels(m.asks, 'ask', depth)), t: now, tt: now, u: m.updateId },
    ]);
  return {
    rest: () => undefined,
    message(client: SimClient, text: string) {
      let request: { id?: unknown; method?: unknown; params?: { channels?: unknown }; nonce?: unknown };
      try {
        request = JSON.parse(text);
      } catch {
        return void server.send(client, { id: -1, code: 10004, message: 'BAD_REQUEST' });
      }
      if (request.method === 'public/respond-heartbeat') return;
      const id = request.id ?? request.nonce;
      if ((request.method !== 'subscribe' && request.method !== 'unsubscribe') || !Array.isArray(request.params?.channels))
        return void server.send(client, { id, method: request.method, code: 10004, message: 'BAD_REQUEST' });
      for (const channel of request.params.channels.map(String)) {
        const [name, instrument, size] = channel.split('.');
        const m = bySymbol.get(instrument ?? '');
        if (!m || !((name === 'trade' && size === undefined) || (name === 'book' && size === String(depth)))) {
          server.send(client, { id, method: request.method, code: 40003, message: `unknown channel ${channel}` });
          continue;
        }
        if (request.method === 'unsubscribe') client.topics.delete(channel);
        else client.topics.add(channel);
        server.send(client, { id, method: request.method, code: 0 });
        if (request.method === 'subscribe' && name === 'book') server.send(client, snapshot(m, Date.now()));
      }
    },
    publish(m, step, now) {
      const trades = step.trades.map((t) => ({ d: String(t.id), s: t.side.toUpperCase(), p: t.price, q: t.qty, t: t.time, i: m.symbol, m: String(t.id) }));
      const tradeTopic = `trade.${m.symbol}`;
      if (trades.length > 0 && server.publish(tradeTopic, () => push(m, tradeTopic, 'trade', trades))) server.trades.push(...step.trades);
      const { diff } = step;
      if (server.takeGap(m.symbol)) return;
      const bookTopic = `book.${m.symbol}.${depth}`;
      const update = { update: { bids: levels(diff.bids), asks: levels(diff.asks) }, t: now, tt: now, u: diff.finalUpdateId, pu: diff.firstUpdateId - 1 };
      server.publish(bookTopic, () => push(m, bookTopic, 'book.update', [update]));
    },
    tick(now) {
      // The venue's heartbeat every 30 s; the client answers public/respond-heartbeat.
      if (now - lastHeartbeat < 30_000) return;
      lastHeartbeat = now;
      for (const c of server.clients) server.send(c, { id: now, method: 'public/heartbeat', code: 0 });
    },
  };
}

export const cryptocom: CcxtSimVenue = {
  ccxt: 'cryptocom',
  markets,
  protocol: cryptocomProtocol,
  pointAt(exchange: Exchange, wsUrl: string) {
    exchange.urls.api.ws.public = `${wsUrl}/exchange/v1/market`;
  },
};
