// Bybit v5 spot: https://bybit-exchange.github.io/docs/v5/ws/connect
import { FrameTemplate, textSlot, valueSlot } from '../template.ts';
import { bySymbol, levelsJson, parseRequest, recorded, type LoadVenueFormat } from './format.ts';

export function bybitFormat(): LoadVenueFormat {
  const frames = recorded<{ topic: string; type: string; data: unknown }[]>('bybit', 'ws_recorded_tardis.json');
  const tradeFrame = frames.find((f) => f.topic.startsWith('publicTrade.'))!;
  const tradeRow = (tradeFrame.data as Record<string, unknown>[])[0]!;
  Object.assign(tradeFrame, { topic: textSlot('topic'), ts: valueSlot('ts'), data: [Object.assign(tradeRow, { i: textSlot('i'), T: valueSlot('T'), p: textSlot('p'), v: textSlot('v'), S: textSlot('S'), s: textSlot('s') })] });
  const bookFrame = (type: string) => {
    const frame = frames.find((f) => f.topic.startsWith('orderbook.') && f.type === type)!;
    Object.assign(frame, { topic: textSlot('topic'), ts: valueSlot('ts') });
    Object.assign(frame.data as object, { s: textSlot('s'), b: valueSlot('b'), a: valueSlot('a'), u: valueSlot('u'), seq: valueSlot('seq') });
    return new FrameTemplate(frame);
  };
  const trade = new FrameTemplate(tradeFrame);
  const delta = bookFrame('delta');
  const snapshot = bookFrame('snapshot');
  const [subscribed, , pong] = recorded<Record<string, unknown>[]>('bybit', 'ws_control.json');
  const instruments = recorded<{ result: { list: Record<string, unknown>[] } }>('bybit', 'rest_instruments_linear.json');
  // Trade ids as the venue writes them on spot: 19 digits, counting up per market.
  const idPrefix = '22900000';
  return {
    id: 'bybit',
    market: (base) => ({ symbol: `${base}USDT`, quote: 'USDT' }),
    rest(url, markets) {
      if (url.pathname !== '/v5/market/instruments-info' || url.searchParams.get('category') !== 'spot') return undefined;
      // The recorded listing is of linear contracts: the spot listing has no contract fields.
      const prototype = { ...instruments.result.list[0]! };
      delete prototype.contractType;
      delete prototype.settleCoin;
      const list = [...markets.values()].map((m) => ({ ...prototype, symbol: m.symbol, status: 'Trading', baseCoin: m.base, quoteCoin: m.quote }));
      return { ...instruments, result: { category: 'spot', list, nextPageCursor: '' } };
    },
    message(client, text, markets) {
      const request = parseRequest(text);
      if (request?.op === 'ping') return client.send(JSON.stringify({ ...pong, req_id: request.req_id }));
      if (request?.op !== 'subscribe' || !Array.isArray(request.args)) return client.send(JSON.stringify({ ...subscribed, success: false, ret_msg: 'error:unknown op', op: request?.op }));
      client.send(JSON.stringify({ ...subscribed, req_id: request.req_id }));
      const now = Date.now();
      for (const arg of request.args.map(String)) {
        const m = bySymbol(markets, arg.split('.').at(-1));
        if (!m) continue;
        if (arg.startsWith('publicTrade.')) client.topics.add(`trades:${m.symbol}`);
        if (!arg.startsWith('orderbook.')) continue;
        client.topics.add(`books:${m.symbol}`);
        client.send(snapshot.render({ topic: arg, ts: now, s: m.symbol, b: levelsJson(m.bids), a: levelsJson(m.asks), u: m.updateId, seq: m.updateId }));
      }
    },
    perClient: false,
    trade: (m, t, now) =>
      trade.render({ topic: `publicTrade.${m.symbol}`, ts: now + 1, i: idPrefix + String(t.n).padStart(11, '0'), T: now, p: t.price, v: t.quantity, S: t.side === 'buy' ? 'Buy' : 'Sell', s: m.symbol }),
    book: (m, c, now) => delta.render({ topic: `orderbook.50.${m.symbol}`, ts: now, s: m.symbol, b: levelsJson([c.bid]), a: levelsJson([c.ask]), u: c.id, seq: c.id }),
    tradeId: (n) => idPrefix + String(n).padStart(11, '0'),
  };
}
