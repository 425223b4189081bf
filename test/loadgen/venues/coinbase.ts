// Coinbase Advanced Trade: https://docs.cdp.coinbase.com/coinbase-app/advanced-trade-apis/websocket/websocket-channels
import type { Level } from '../market.ts';
import { FrameTemplate, textSlot, valueSlot } from '../template.ts';
import { isoClock, parseRequest, recorded, type LoadVenueFormat } from './format.ts';

export function coinbaseFormat(): LoadVenueFormat {
  const session = recorded<Record<string, unknown>[]>('coinbase', 'ws_recorded_session.json');
  const envelope = (channel: string, type?: string) => {
    const frame = session.find((f) => f.channel === channel && (type === undefined || (f.events as { type?: string }[])[0]!.type === type))!;
    return Object.assign(frame, { timestamp: textSlot('timestamp'), sequence_num: valueSlot('seq') });
  };
  const tradeFrame = envelope('market_trades');
  const tradeEvent = (tradeFrame.events as { trades: Record<string, unknown>[] }[])[0]!;
  tradeEvent.trades = [Object.assign(tradeEvent.trades[0]!, { product_id: textSlot('product'), trade_id: textSlot('id'), price: textSlot('price'), size: textSlot('size'), time: textSlot('time'), side: textSlot('side') })];
  const l2Frame = (type: string) => {
    const frame = envelope('l2_data', type);
    Object.assign((frame.events as object[])[0]!, { product_id: textSlot('product'), updates: valueSlot('updates') });
    return new FrameTemplate(frame);
  };
  const l2Update = recorded<{ events: { updates: Record<string, unknown>[] }[] }[]>('coinbase', 'ws_recorded_session.json').find((f) => (f.events[0] as { type?: string }).type === 'update' && 'updates' in f.events[0]!)!.events[0]!.updates[0]!;
  const levelUpdate = new FrameTemplate({ ...l2Update, side: textSlot('side'), event_time: textSlot('time'), price_level: textSlot('price'), new_quantity: textSlot('qty') });
  const heartbeatFrame = envelope('heartbeats');
  Object.assign((heartbeatFrame.events as object[])[0]!, { current_time: textSlot('time'), heartbeat_counter: valueSlot('counter') });
  const subscriptionsFrame = envelope('subscriptions');
  Object.assign(subscriptionsFrame, { events: valueSlot('events') });
  const trade = new FrameTemplate(tradeFrame);
  const update = l2Frame('update');
  const snapshot = l2Frame('snapshot');
  const heartbeat = new FrameTemplate(heartbeatFrame);
  const subscriptions = new FrameTemplate(subscriptionsFrame);
  const products = recorded<{ products: Record<string, unknown>[] }>('coinbase', 'rest_products.json');
  const updates = (time: string, bids: readonly Level[], asks: readonly Level[]) =>
    `[${[...bids.map(([price, qty]) => levelUpdate.render({ side: 'bid', time, price, qty })), ...asks.map(([price, qty]) => levelUpdate.render({ side: 'offer', time, price, qty }))].join(',')}]`;
  const isoTime = isoClock();
  let heartbeats = 0;
  return {
    id: 'coinbase',
    market: (base) => ({ symbol: `${base}-USD`, quote: 'USD' }),
    rest(url, markets) {
      if (url.pathname !== '/api/v3/brokerage/market/products') return undefined;
      const [prototype] = products.products;
      const list = [...markets.values()].map((m) => ({ ...prototype, product_id: m.symbol, base_currency_id: m.base, quote_currency_id: m.quote, status: 'online', alias: '', alias_to: [] }));
      return { products: list, num_products: list.length };
    },
    message(client, text, markets) {
      const request = parseRequest(text);
      const channel = String(request?.channel);
      if (request?.type !== 'subscribe') return client.send(JSON.stringify({ type: 'error', message: 'failure to parse request' }));
      const ids = Array.isArray(request.product_ids) ? request.product_ids.map(String).filter((id) => markets.has(id)) : [];
      if (channel === 'heartbeats') client.topics.add('heartbeats');
      for (const id of ids) client.topics.add(`${channel === 'level2' ? 'books' : 'trades'}:${id}`);
      const now = isoTime(Date.now());
      const events = JSON.stringify([{ subscriptions: { [channel]: channel === 'heartbeats' ? ['heartbeats'] : ids } }]);
      client.send(subscriptions.render({ timestamp: now, seq: client.sequence++, events }));
      if (channel !== 'level2') return;
      for (const id of ids) {
        const m = markets.get(id)!;
        client.send(snapshot.render({ timestamp: now, seq: client.sequence++, product: id, updates: updates(now, m.bids, m.asks) }));
      }
    },
    perClient: true,
    trade(m, t, now, client) {
      const time = isoTime(now);
      // `side` is the maker's on this channel.
      return trade.render({ timestamp: time, seq: client.sequence++, product: m.symbol, id: String(t.n), price: t.price, size: t.quantity, time, side: t.side === 'buy' ? 'SELL' : 'BUY' });
    },
    book(m, c, now, client) {
      const time = isoTime(now);
      return update.render({ timestamp: time, seq: client.sequence++, product: m.symbol, updates: updates(time, [c.bid], [c.ask]) });
    },
    heartbeat(now, client) {
      heartbeats += 1;
      return heartbeat.render({ timestamp: isoTime(now), seq: client.sequence++, time: isoTime(now), counter: heartbeats });
    },
    tradeId: (n) => String(n),
  };
}
