// Lighter's public websocket (perpetuals), SIMULATED: https://apidocs.lighter.xyz/docs/websocket-reference
// `{"type":"subscribe","channel":"trade/1"}` (market index); pushes on channel `trade:1` carry
// `trades` and `liquidation_trades`, whose `is_maker_ask` true means the taker bought;
// `order_book/1` answers the whole book (`subscribed/order_book`), then changed levels
// (`update/order_book`, size 0 removes), numbered by `offset`.
import type { Exchange } from 'ccxt';
import { sortedLevels, type SimLiquidation, type SimMarket, type SimTrade } from '../market.ts';
import type { SimClient, SimVenueServer, VenueProtocol } from '../venueServer.ts';
import markets from './__fixtures__/lighter.markets.json' with { type: 'json' };
import type { CcxtSimVenue } from './simulator.ts';

const levels = (raw: [string, string][]) => raw.map(([price, size]) => ({ price, size }));

function lighterProtocol(server: SimVenueServer): VenueProtocol {
  const bySymbol = new Map(server.listing.markets.map((m) => [m.symbol, m]));
  let nextLiquidationId = 1;
  const fill = (m: SimMarket, t: Pick<SimTrade, 'price' | 'qty' | 'time'> & { id: number; takerBought: boolean }) => ({
    trade_id: t.id,
    type: 'trade',
    market_id: Number(m.symbol),
    size: t.qty,
    price: t.price,
    usd_amount: (Number(t.price) * Number(t.qty)).toFixed(6),
    is_maker_ask: t.takerBought,
    timestamp: t.time,
  });
  // A long is closed by a forced sell: the taker sells into the bid (the maker is not the ask).
  const liquidationFill = (m: SimMarket, l: SimLiquidation) => fill(m, { ...l, id: 1_000_000_000 + nextLiquidationId++, takerBought: l.positionSide === 'short' });
  const book = (m: SimMarket, type: 'subscribed/order_book' | 'update/order_book', bids: [string, string][], asks: [string, string][], now: number) => ({
    channel: `order_book:${m.symbol}`,
    offset: m.updateId,
    order_book: { code: 0, asks: levels(asks), bids: levels(bids), offset: m.updateId },
    timestamp: now,
    type,
  });
  return {
    rest: () => undefined,
    open(client) {
      server.send(client, { session_id: `sim-${client.openedAt}`, type: 'connected' });
    },
    message(client: SimClient, text: string) {
      let request: { type?: unknown; channel?: unknown };
      try {
        request = JSON.parse(text);
      } catch {
        return void server.send(client, { error: { code: 30005, message: 'Invalid message' } });
      }
      if (request.type === 'pong') return;
      if (request.type === 'ping') return void server.send(client, { type: 'pong' });
      const [name, index] = String(request.channel ?? '').split('/');
      const m = bySymbol.get(index ?? '');
      if ((request.type !== 'subscribe' && request.type !== 'unsubscribe') || !m || (name !== 'trade' && name !== 'order_book'))
        return void server.send(client, { error: { code: 30003, message: `Invalid channel ${String(request.channel)}` } });
      const topic = `${name}:${m.symbol}`;
      if (request.type === 'unsubscribe') {
        client.topics.delete(topic);
        return void server.send(client, { type: 'unsubscribed', channel: topic });
      }
      client.topics.add(topic);
      if (name === 'trade') server.send(client, { channel: topic, trades: [], type: 'subscribed/trade' });
      else server.send(client, book(m, 'subscribed/order_book', sortedLevels(m.bids, 'bid'), sortedLevels(m.asks, 'ask'), Date.now()));
    },
    publish(m, step, now) {
      const trades = step.trades.map((t) => fill(m, { ...t, takerBought: t.side === 'buy' }));
      const liquidations = step.liquidations.map((l) => liquidationFill(m, l));
      if (trades.length > 0 || liquidations.length > 0) {
        const message = { channel: `trade:${m.symbol}`, trades, liquidation_trades: liquidations, type: 'update/trade' };
        if (server.publish(`trade:${m.symbol}`, () => message)) {
          server.trades.push(...step.trades);
          server.liquidations.push(...step.liquidations);
        }
      }
      const update = book(m, 'update/order_book', step.diff.bids, step.diff.asks, now);
      server.publish(`order_book:${m.symbol}`, () => update);
    },
  };
}

export const lighter: CcxtSimVenue = {
  ccxt: 'lighter',
  markets,
  protocol: lighterProtocol,
  pointAt(exchange: Exchange, wsUrl: string) {
    exchange.urls.api.ws = `${wsUrl}/stream`;
  },
};
