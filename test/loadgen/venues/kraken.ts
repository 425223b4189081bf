// Kraken spot websocket v2: https://docs.kraken.com/api/docs/websocket-v2/book
// The instrument channel lists the pairs with the precisions the book checksum is written at
// (https://docs.kraken.com/api/docs/guides/spot-ws-book-v2: top 10 levels, CRC32, computed by
// simulator/checksums.ts); prices and quantities are JSON numbers; heartbeats every second.
// No recording of v2 exists (SOURCES.md): the templates are the documented frames of the fixtures.
import { krakenBookChecksum } from '../../../simulator/checksums.ts';
import type { Level, LoadMarket } from '../market.ts';
import { FrameTemplate, textSlot, valueSlot } from '../template.ts';
import { decimalsOf, isoClock, parseRequest, recorded, type LoadVenueFormat } from './format.ts';

interface Precision {
  price: number;
  qty: number;
}

export function krakenFormat(): LoadVenueFormat {
  const [tradeFrame] = recorded<{ data: Record<string, unknown>[] }[]>('kraken', 'ws_trade.json');
  tradeFrame!.data = [Object.assign(tradeFrame!.data[0]!, { symbol: textSlot('symbol'), side: textSlot('side'), price: valueSlot('price'), qty: valueSlot('qty'), trade_id: valueSlot('id'), timestamp: textSlot('time') })];
  const bookFrame = (name: string) => {
    const [frame] = recorded<{ data: Record<string, unknown>[] }[]>('kraken', name);
    Object.assign(frame!.data[0]!, { symbol: textSlot('symbol'), bids: valueSlot('bids'), asks: valueSlot('asks'), checksum: valueSlot('checksum') }, 'timestamp' in frame!.data[0]! ? { timestamp: textSlot('time') } : {});
    return new FrameTemplate(frame);
  };
  const trade = new FrameTemplate(tradeFrame);
  const update = bookFrame('ws_book_update.json');
  const snapshot = bookFrame('ws_book_snapshot.json');
  const [subscribed, refused, pong, heartbeat] = recorded<Record<string, unknown>[]>('kraken', 'ws_control.json');
  const instruments = recorded<{ data: { pairs: Record<string, unknown>[] } }[]>('kraken', 'ws_instrument.json')[0]!;
  const isoTime = isoClock();
  const heartbeatText = JSON.stringify(heartbeat);
  // The pair's precisions: its prices' decimals, and the most any of its quantities has (quantities are written at it for the checksum).
  const precisions = new Map<string, Precision>();
  const precisionOf = (m: LoadMarket): Precision => {
    let p = precisions.get(m.symbol);
    if (!p) {
      const quantities = [...m.quantities, ...m.bids.map(([, q]) => q), ...m.asks.map(([, q]) => q)];
      precisions.set(m.symbol, (p = { price: decimalsOf(m.bids[0]![0]), qty: Math.max(...quantities.map(decimalsOf)) }));
    }
    return p;
  };
  const levels = (list: readonly Level[]) => `[${list.map(([price, qty]) => `{"price":${price},"qty":${qty}}`).join(',')}]`;
  // Quantities at the pair's precision, made once each (a market's quantities come from a fixed pool).
  const fixedQuantities = new Map<string, Map<string, string>>();
  const checksum = (m: LoadMarket) => {
    let fixed = fixedQuantities.get(m.symbol);
    if (!fixed) fixedQuantities.set(m.symbol, (fixed = new Map()));
    const qty = precisionOf(m).qty;
    const atPrecision = (list: readonly Level[]) => list.slice(0, 10).map(([p, q]): Level => [p, fixed.get(q) ?? fixed.set(q, Number(q).toFixed(qty)).get(q)!]);
    return krakenBookChecksum(atPrecision(m.bids), atPrecision(m.asks));
  };
  const times = () => {
    const now = isoTime(Date.now());
    return { time_in: now, time_out: now };
  };
  return {
    id: 'kraken',
    market: (base) => ({ symbol: `${base}/USD`, quote: 'USD' }),
    rest: () => undefined,
    message(client, text, markets) {
      const request = parseRequest(text);
      if (request?.method === 'ping') return client.send(JSON.stringify({ ...pong, req_id: request.req_id, ...times() }));
      const params = (request?.params ?? {}) as { channel?: unknown; symbol?: unknown; depth?: unknown };
      if (request?.method !== 'subscribe' && request?.method !== 'unsubscribe') return client.send(JSON.stringify({ error: 'Method not found', method: request?.method, success: false, ...times() }));
      const method = request.method;
      const ack = (result: object) => client.send(JSON.stringify({ ...subscribed, method, result, req_id: request.req_id, ...times() }));
      if (params.channel === 'instrument') {
        ack({ channel: 'instrument' });
        const pairs = [...markets.values()].map((m) => {
          const precision = precisionOf(m);
          return { ...instruments.data.pairs[0], symbol: m.symbol, base: m.base, quote: m.quote, status: 'online', price_precision: precision.price, price_increment: 10 ** -precision.price, qty_precision: precision.qty, qty_increment: 10 ** -precision.qty };
        });
        return client.send(JSON.stringify({ ...instruments, data: { ...instruments.data, pairs } }));
      }
      const channel = params.channel === 'book' ? 'book' : 'trade';
      for (const symbol of Array.isArray(params.symbol) ? params.symbol.map(String) : []) {
        const m = markets.get(symbol);
        if (!m || (params.channel !== 'trade' && params.channel !== 'book')) {
          client.send(JSON.stringify({ ...refused, method, error: `Currency pair not supported ${symbol}`, symbol, req_id: request.req_id, ...times() }));
          continue;
        }
        const topic = `${channel === 'book' ? 'books' : 'trades'}:${symbol}`;
        ack({ channel, symbol, ...(channel === 'book' ? { depth: params.depth ?? 10, snapshot: true } : { snapshot: false }) });
        if (method === 'unsubscribe') {
          client.topics.delete(topic);
          continue;
        }
        client.topics.add(topic);
        client.topics.add('heartbeats');
        if (channel === 'book') client.send(snapshot.render({ symbol, bids: levels(m.bids), asks: levels(m.asks), checksum: checksum(m) }));
      }
    },
    perClient: false,
    // `side` is the taker's.
    trade: (m, t, now) => trade.render({ symbol: m.symbol, side: t.side, price: t.price, qty: t.quantity, id: t.n, time: isoTime(now) }),
    book: (m, c, now) => update.render({ symbol: m.symbol, bids: levels([c.bid]), asks: levels([c.ask]), checksum: checksum(m), time: isoTime(now) }),
    heartbeat: () => heartbeatText,
    tradeId: (n) => String(n),
  };
}
