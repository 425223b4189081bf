// Bitstamp websocket API v2: https://www.bitstamp.net/websocket/v2/
// live_trades_{pair} and order_book_{pair}: the whole top 100 at every change (the loadgen's 25
// levels here), nothing on subscription. No recording of order_book exists (SOURCES.md): its
// template is the documented frame of the fixture.
import type { LoadMarket } from '../market.ts';
import { FrameTemplate, textSlot, valueSlot } from '../template.ts';
import { levelsJson, parseRequest, recorded, recordedSession, type LoadVenueFormat } from './format.ts';

const tradesChannel = 'live_trades_';
const bookChannel = 'order_book_';

export function bitstampFormat(): LoadVenueFormat {
  const session = recordedSession('bitstamp', 'ws_recorded_cryptofeed.json');
  const subscribed = session.find((f) => f.event === 'bts:subscription_succeeded')!;
  const tradeFrame = session.find((f) => f.event === 'trade');
  Object.assign(tradeFrame!.data as object, {
    microtimestamp: textSlot('micros'), amount: valueSlot('amount'), buy_order_id: valueSlot('buyOrder'), sell_order_id: valueSlot('sellOrder'), amount_str: textSlot('amount'),
    price_str: textSlot('price'), timestamp: textSlot('seconds'), price: valueSlot('price'), type: valueSlot('type'), id: valueSlot('id'),
  });
  Object.assign(tradeFrame!, { channel: textSlot('channel') });
  const [bookFrame] = recorded<Record<string, unknown>[]>('bitstamp', 'ws_book.json');
  Object.assign(bookFrame!.data as object, { timestamp: textSlot('seconds'), microtimestamp: textSlot('micros'), bids: valueSlot('bids'), asks: valueSlot('asks') });
  Object.assign(bookFrame!, { channel: textSlot('channel') });
  const trade = new FrameTemplate(tradeFrame);
  const book = new FrameTemplate(bookFrame);
  const heartbeat = recorded<Record<string, unknown>[]>('bitstamp', 'ws_control.json').find((f) => f.event === 'bts:heartbeat')!;
  const [pairPrototype] = recorded<Record<string, unknown>[]>('bitstamp', 'rest_trading_pairs_info.json');
  const channels = new Map<string, { trades: string; book: string }>();
  const channelsOf = (m: LoadMarket) => channels.get(m.symbol) ?? channels.set(m.symbol, { trades: tradesChannel + m.symbol, book: bookChannel + m.symbol }).get(m.symbol)!;
  const seconds = (now: number) => String(Math.floor(now / 1_000));
  return {
    id: 'bitstamp',
    market: (base) => ({ symbol: `${base.toLowerCase()}usd`, quote: 'USD' }),
    rest(url, markets) {
      if (url.pathname !== '/api/v2/trading-pairs-info/') return undefined;
      return [...markets.values()].map((m) => ({ ...pairPrototype, name: `${m.base}/${m.quote}`, url_symbol: m.symbol, trading: 'Enabled', description: `${m.base} / ${m.quote}` }));
    },
    message(client, text, markets) {
      const request = parseRequest(text);
      if (request?.event === 'bts:heartbeat') return client.send(JSON.stringify(heartbeat));
      const channel = String((request?.data as { channel?: unknown } | undefined)?.channel ?? '');
      const prefix = [tradesChannel, bookChannel].find((p) => channel.startsWith(p));
      const m = prefix && markets.get(channel.slice(prefix.length));
      if ((request?.event !== 'bts:subscribe' && request?.event !== 'bts:unsubscribe') || !m) {
        return client.send(JSON.stringify({ event: 'bts:error', channel, data: { code: null, message: `Bad subscription string: ${channel}` } }));
      }
      const topic = `${prefix === tradesChannel ? 'trades' : 'books'}:${m.symbol}`;
      if (request.event === 'bts:unsubscribe') client.topics.delete(topic);
      else client.topics.add(topic);
      client.send(JSON.stringify({ ...subscribed, event: request.event === 'bts:subscribe' ? 'bts:subscription_succeeded' : 'bts:unsubscription_succeeded', channel }));
    },
    perClient: false,
    trade: (m, t, now) =>
      // `type` is the taker's side: 0 buy, 1 sell.
      trade.render({
        channel: channelsOf(m).trades, micros: `${now}000`, seconds: seconds(now), amount: t.quantity, price: t.price, type: t.side === 'buy' ? 0 : 1, id: t.n, buyOrder: 2 * t.n, sellOrder: 2 * t.n + 1,
      }),
    book: (m, _c, now) => book.render({ channel: channelsOf(m).book, seconds: seconds(now), micros: `${now}000`, bids: levelsJson(m.bids), asks: levelsJson(m.asks) }),
    tradeId: (n) => String(n),
  };
}
