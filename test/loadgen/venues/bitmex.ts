// BitMEX realtime websocket: https://www.bitmex.com/app/wsAPI
// Inverse perpetuals (XBTUSD): sizes count 1-dollar contracts. Tables trade (side is the taker's)
// and orderBookL2: a partial of the book, then rows updated by `id` (our ladder's prices never come
// or go, so every change is an update); liquidation is subscribed and answered with its partial.
import type { LoadMarket } from '../market.ts';
import { FrameTemplate, textSlot, valueSlot } from '../template.ts';
import { bySymbol, isoClock, parseRequest, recorded, recordedSession, type LoadVenueFormat } from './format.ts';

/** BitMEX writes bitcoin as XBT. */
const venueTicker = (ticker: string) => (ticker === 'BTC' ? 'XBT' : ticker);

/** A trade's GUID, made from its number. */
const tradeGuid = (n: number) => {
  const hex = n.toString(16).padStart(32, '0');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
};

/** A row's id, from its price: the price's digits as a number (a market's prices all carry the same decimals). */
const rowId = (price: string) => Number(price.replace('.', ''));

export function bitmexFormat(): LoadVenueFormat {
  const session = recordedSession('bitmex', 'ws_recorded_cryptofeed.json');
  const [welcome] = session;
  const subscribed = session.find((f) => f.success === true)!;
  const frame = (table: string, action: string) => session.find((f) => f.table === table && f.action === action)!;
  const tradeFrame = frame('trade', 'insert');
  const tradeRow = (tradeFrame.data as Record<string, unknown>[])[0]!;
  tradeFrame.data = [
    Object.assign(tradeRow, {
      timestamp: textSlot('time'), symbol: textSlot('symbol'), side: textSlot('side'), size: valueSlot('size'), price: valueSlot('price'), trdMatchID: textSlot('id'),
      grossValue: valueSlot('grossValue'), homeNotional: valueSlot('homeNotional'), foreignNotional: valueSlot('size'),
    }),
  ];
  const trade = new FrameTemplate(tradeFrame);
  const updateFrame = frame('orderBookL2', 'update');
  const [updateRow] = updateFrame.data as object[];
  const row = new FrameTemplate({ ...updateRow, symbol: textSlot('symbol'), id: valueSlot('id'), side: textSlot('side'), size: valueSlot('size') });
  const update = new FrameTemplate({ ...updateFrame, data: valueSlot('rows') });
  const bookPartial = frame('orderBookL2', 'partial');
  const [partialRow] = bookPartial.data as object[];
  // Every table starts with a partial: the book whole; trades and liquidations with none here, in
  // the documented envelope (the recorded trade partial's types are the trade table's).
  const [emptyPartial] = recorded<Record<string, unknown>[]>('bitmex', 'ws_trade.json');
  const partial = (table: string, symbol: string, data: unknown[]) => ({ ...(table === 'orderBookL2' ? bookPartial : emptyPartial), table, filter: { symbol }, data });
  const instruments = recorded<Record<string, unknown>[]>('bitmex', 'rest_instrument_active.json');
  const isoTime = isoClock();
  // The partial lists the book by row id: asks high to low, then bids high to low.
  const partialRows = (m: LoadMarket) =>
    [...[...m.asks].reverse().map((level) => [level, 'Sell'] as const), ...m.bids.map((level) => [level, 'Buy'] as const)].map(([[price, size], side]) => ({
      ...partialRow, symbol: m.symbol, id: rowId(price), side, size: Number(size), price: Number(price),
    }));
  return {
    id: 'bitmex',
    market: (base) => ({ symbol: `${venueTicker(base)}USD`, quote: 'USD', inverse: true }),
    rest(url, markets) {
      if (url.pathname !== '/api/v1/instrument/active') return undefined;
      // The recorded listing's first instrument is XBTUSD, an inverse perpetual.
      const [prototype] = instruments;
      return [...markets.values()].map((m) => ({ ...prototype, symbol: m.symbol, rootSymbol: venueTicker(m.base), underlying: venueTicker(m.base), quoteCurrency: m.quote, state: 'Open' }));
    },
    open: (client) => client.send(JSON.stringify({ ...welcome, timestamp: new Date().toISOString() })),
    message(client, text, markets) {
      if (text === 'ping') return client.send('pong');
      const request = parseRequest(text);
      const args = Array.isArray(request?.args) ? request.args.map(String) : [];
      if (request?.op !== 'subscribe' && request?.op !== 'unsubscribe') return client.send(JSON.stringify({ status: 400, error: `Unknown op: ${String(request?.op)}`, meta: {}, request }));
      for (const arg of args) {
        const [table, symbol] = arg.split(':');
        const m = bySymbol(markets, symbol);
        if (!m || (table !== 'trade' && table !== 'orderBookL2' && table !== 'liquidation')) {
          client.send(JSON.stringify({ status: 400, error: `Unknown or expired table: ${arg}`, meta: {}, request }));
          continue;
        }
        // Liquidations are subscribed to, and never come here.
        const topic = table === 'trade' ? `trades:${m.symbol}` : table === 'orderBookL2' ? `books:${m.symbol}` : undefined;
        client.send(JSON.stringify({ ...subscribed, [request.op]: arg, request }));
        if (request.op === 'unsubscribe') {
          if (topic) client.topics.delete(topic);
          continue;
        }
        if (topic) client.topics.add(topic);
        client.send(JSON.stringify(partial(table, m.symbol, table === 'orderBookL2' ? partialRows(m) : [])));
      }
    },
    perClient: false,
    trade(m, t, now) {
      // Base units (and satoshis) of `size` dollar contracts at the price.
      const home = Number(t.quantity) / Number(t.price);
      return trade.render({
        time: isoTime(now), symbol: m.symbol, side: t.side === 'buy' ? 'Buy' : 'Sell', size: t.quantity, price: t.price, id: tradeGuid(t.n),
        grossValue: Math.round(home * 1e8), homeNotional: home,
      });
    },
    book: (m, c) =>
      update.render({ rows: `[${row.render({ symbol: m.symbol, id: rowId(c.bid[0]), side: 'Buy', size: c.bid[1] })},${row.render({ symbol: m.symbol, id: rowId(c.ask[0]), side: 'Sell', size: c.ask[1] })}]` }),
    tradeId: tradeGuid,
  };
}
