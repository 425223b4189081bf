// Gate spot websocket v4: https://www.gate.com/docs/developers/apiv4/ws/en/
// spot.trades and spot.obu (order book v2: a full book on subscription, then updates numbered U..u).
import type { LoadMarket } from '../market.ts';
import { FrameTemplate, textSlot, valueSlot } from '../template.ts';
import { levelsJson, parseRequest, recorded, type LoadVenueFormat } from './format.ts';

/** Levels of the book stream the collector follows: `ob.BTC_USDT.50`. */
const bookStream = /^ob\.(.+)\.(\d+)$/;

export function gateFormat(): LoadVenueFormat {
  const [tradeFrame, subscribed, fullFrame, updateFrame] = recorded<Record<string, unknown>[]>('gate', 'ws_recorded_tardis.json');
  Object.assign(tradeFrame!, { time: valueSlot('seconds'), time_ms: valueSlot('ms') });
  Object.assign(tradeFrame!.result as object, {
    id: valueSlot('id'), create_time: valueSlot('seconds'), create_time_ms: textSlot('createMs'), side: textSlot('side'), currency_pair: textSlot('pair'), amount: textSlot('amount'), price: textSlot('price'),
  });
  const bookFrame = (frame: Record<string, unknown>) => {
    Object.assign(frame, { time_ms: valueSlot('ms') });
    Object.assign(frame.result as object, { t: valueSlot('ms'), s: textSlot('stream'), u: valueSlot('u'), b: valueSlot('b'), a: valueSlot('a') }, 'U' in (frame.result as object) ? { U: valueSlot('U') } : {});
    return new FrameTemplate(frame);
  };
  const trade = new FrameTemplate(tradeFrame);
  const full = bookFrame(fullFrame!);
  const update = bookFrame(updateFrame!);
  const [pairPrototype] = recorded<Record<string, unknown>[]>('gate', 'rest_currency_pairs.json');
  const streams = new Map<string, string>();
  const streamOf = (m: LoadMarket) => streams.get(m.symbol) ?? streams.set(m.symbol, `ob.${m.symbol}.50`).get(m.symbol)!;
  const seconds = (ms: number) => Math.floor(ms / 1_000);
  return {
    id: 'gate',
    market: (base) => ({ symbol: `${base}_USDT`, quote: 'USDT' }),
    rest(url, markets) {
      if (url.pathname !== '/api/v4/spot/currency_pairs') return undefined;
      return [...markets.values()].map((m) => ({ ...pairPrototype, id: m.symbol, base: m.base, base_name: m.base, quote: m.quote, quote_name: m.quote, trade_status: 'tradable', trade_url: `https://www.gate.com/trade/${m.symbol}` }));
    },
    message(client, text, markets) {
      const request = parseRequest(text);
      const channel = String(request?.channel);
      const payload = Array.isArray(request?.payload) ? request.payload.map(String) : [];
      const now = Date.now();
      const reply = (fields: object) => client.send(JSON.stringify({ ...subscribed, time: seconds(now), time_ms: now, channel, event: request?.event, payload, ...fields }));
      const pairOf = (p: string) => (channel === 'spot.obu' ? bookStream.exec(p)?.[1] : p);
      const unknown = payload.find((p) => !markets.has(pairOf(p) ?? ''));
      if ((request?.event !== 'subscribe' && request?.event !== 'unsubscribe') || (channel !== 'spot.trades' && channel !== 'spot.obu') || unknown !== undefined) {
        return reply({ error: { code: 2, message: `unknown currency pair ${unknown ?? ''}` }, result: null });
      }
      for (const p of payload) {
        const topic = `${channel === 'spot.obu' ? 'books' : 'trades'}:${pairOf(p)}`;
        if (request.event === 'unsubscribe') client.topics.delete(topic);
        else client.topics.add(topic);
      }
      reply({ result: { status: 'success' } });
      if (channel !== 'spot.obu' || request.event !== 'subscribe') return;
      for (const p of payload) {
        const m = markets.get(pairOf(p)!)!;
        client.send(full.render({ ms: now, stream: p, u: m.updateId, b: levelsJson(m.bids), a: levelsJson(m.asks) }));
      }
    },
    perClient: false,
    // `side` is the taker's.
    trade: (m, t, now) =>
      trade.render({ seconds: seconds(now), ms: now + 1, id: t.n, createMs: `${now}.0`, side: t.side, pair: m.symbol, amount: t.quantity, price: t.price }),
    book: (m, c, now) => update.render({ ms: now, stream: streamOf(m), U: c.id, u: c.id, b: levelsJson([c.bid]), a: levelsJson([c.ask]) }),
    tradeId: (n) => String(n),
  };
}
