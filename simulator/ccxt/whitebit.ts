// WhiteBIT's public websocket (JSON-RPC), SIMULATED: https://docs.whitebit.com/public/websocket/
// `trades_subscribe` names every market wanted (each request replaces the last); `depth_subscribe`
// [market, limit, interval, multiple] sends the top `limit` levels (`params[0]` true), then changes to
// that window (false; size "0" removes a level). Times are unix seconds with a fraction.
import type { Exchange } from 'ccxt';
import { sortedLevels, type SimMarket } from '../market.ts';
import type { SimClient, SimVenueServer, VenueProtocol } from '../venueServer.ts';
import markets from './__fixtures__/whitebit.markets.json' with { type: 'json' };
import type { CcxtSimVenue } from './simulator.ts';

/** Seconds with a sub-millisecond part, as the venue sends them (its clocks have microseconds). */
const seconds = (ms: number) => (ms + 0.25) / 1000;

type Levels = [string, string][];

function whitebitProtocol(server: SimVenueServer): VenueProtocol {
  const bySymbol = new Map(server.listing.markets.map((m) => [m.symbol, m]));
  /** The window last sent per market and depth, to send only what changed in it. */
  const windows = new Map<string, { bids: Levels; asks: Levels }>();
  const windowOf = (m: SimMarket, limit: number) => ({ bids: sortedLevels(m.bids, 'bid', limit), asks: sortedLevels(m.asks, 'ask', limit) });
  const changes = (before: Levels, after: Levels): Levels => {
    const next = new Map(after);
    const out: Levels = before.filter(([p]) => !next.has(p)).map(([p]) => [p, '0']);
    const previous = new Map(before);
    for (const [p, q] of after) if (previous.get(p) !== q) out.push([p, q]);
    return out;
  };
  const reply = (client: SimClient, id: unknown, error?: { code: number; message: string }) =>
    server.send(client, { id, result: error ? null : { status: 'success' }, error: error ?? null });
  return {
    rest: () => undefined,
    message(client: SimClient, text: string) {
      let request: { id?: unknown; method?: unknown; params?: unknown };
      try {
        request = JSON.parse(text);
      } catch {
        return void server.send(client, { id: null, result: null, error: { code: 1, message: 'invalid request' } });
      }
      const params = Array.isArray(request.params) ? request.params : [];
      switch (request.method) {
        case 'ping':
          return void server.send(client, { id: request.id, result: 'pong', error: null });
        case 'trades_subscribe': {
          const symbols = params.map(String);
          if (symbols.some((s) => !bySymbol.has(s))) return void reply(client, request.id, { code: 2, message: 'invalid argument' });
          for (const t of [...client.topics]) if (t.startsWith('trades:')) client.topics.delete(t);
          for (const s of symbols) client.topics.add(`trades:${s}`);
          return void reply(client, request.id);
        }
        case 'depth_subscribe': {
          const [symbol, limit, , multiple] = params as [string, number, string, boolean];
          const m = bySymbol.get(String(symbol));
          if (!m || !Number.isInteger(limit) || limit < 1 || limit > 100) return void reply(client, request.id, { code: 2, message: 'invalid argument' });
          if (multiple !== true) for (const t of [...client.topics]) if (t.startsWith('depth:')) client.topics.delete(t);
          client.topics.add(`depth:${m.symbol}:${limit}`);
          reply(client, request.id);
          const window = windowOf(m, limit);
          windows.set(`${m.symbol}:${limit}`, window);
          return void server.send(client, { id: null, method: 'depth_update', params: [true, { timestamp: seconds(Date.now()), ...window }, m.symbol] });
        }
        default:
          return void reply(client, request.id, { code: 3, message: 'method not found' });
      }
    },
    publish(m, step, now) {
      const trades = step.trades.map((t) => ({ id: t.id, time: seconds(t.time), price: t.price, amount: t.qty, type: t.side }));
      const message = { id: null, method: 'trades_update', params: [m.symbol, trades] };
      if (trades.length > 0 && server.publish(`trades:${m.symbol}`, () => message)) server.trades.push(...step.trades);
      for (const [key, before] of windows) {
        const [symbol, limit] = key.split(':');
        if (symbol !== m.symbol) continue;
        const after = windowOf(m, Number(limit));
        windows.set(key, after);
        const update = { id: null, method: 'depth_update', params: [false, { timestamp: seconds(now), bids: changes(before.bids, after.bids), asks: changes(before.asks, after.asks) }, m.symbol] };
        server.publish(`depth:${key}`, () => update);
      }
    },
  };
}

export const whitebit: CcxtSimVenue = {
  ccxt: 'whitebit',
  markets,
  protocol: whitebitProtocol,
  pointAt(exchange: Exchange, wsUrl: string) {
    exchange.urls.api.ws = `${wsUrl}/ws`;
  },
};
