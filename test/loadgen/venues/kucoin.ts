// KuCoin spot websocket: https://www.kucoin.com/docs-new/websocket-api/base-info/introduction
// POST /api/v1/bullet-public hands out a token and this server as the endpoint; /market/match
// (trades) and /market/level2 (each change numbered on its own: a book change here is two numbers,
// bid then ask, 2 x the update id at the ask) over the REST snapshot level2_100.
import type { Level } from '../market.ts';
import { FrameTemplate, textSlot, valueSlot } from '../template.ts';
import { bySymbol, parseRequest, recorded, type LoadVenueFormat } from './format.ts';

export function kucoinFormat(): LoadVenueFormat {
  const tardis = recorded<Record<string, unknown>[]>('kucoin', 'ws_recorded_tardis.json');
  // Numeric trade ids, as the venue writes them now (the LMR-BTC trade; BTC-USDT's of 2022 were hex).
  const tradeFrame = tardis.find((f) => f.subject === 'trade.l3match' && /^\d+$/.test(String((f.data as { tradeId?: unknown }).tradeId)))!;
  Object.assign(tradeFrame, { topic: textSlot('topic') });
  Object.assign(tradeFrame.data as object, { price: textSlot('price'), sequence: textSlot('id'), side: textSlot('side'), size: textSlot('size'), symbol: textSlot('symbol'), time: textSlot('time'), tradeId: textSlot('id') });
  const level2Frame = tardis.find((f) => f.subject === 'trade.l2update')!;
  Object.assign(level2Frame, { topic: textSlot('topic') });
  // The recording predates the change's `time`; it is added as the venue sends it now.
  Object.assign(level2Frame.data as object, { sequenceStart: valueSlot('start'), symbol: textSlot('symbol'), changes: { asks: valueSlot('asks'), bids: valueSlot('bids') }, sequenceEnd: valueSlot('end'), time: valueSlot('time') });
  const trade = new FrameTemplate(tradeFrame);
  const level2 = new FrameTemplate(level2Frame);
  const [welcome, ack, pong] = ['welcome', 'ack', 'pong'].map((type) => tardis.find((f) => f.type === type)!);
  const bullet = recorded<{ data: { instanceServers: Record<string, unknown>[] } }>('kucoin', 'rest_bullet_public.json');
  const [depth] = Object.values(recorded<Record<string, { json: { data: Record<string, unknown> } }>>('kucoin', 'rest_recorded_depth.json')).map((d) => d.json);
  const [symbolPrototype] = recorded<{ data: Record<string, unknown>[] }>('kucoin', 'rest_symbols.json').data;
  const change = (level: Level, seq: number) => `[${JSON.stringify(level[0])},${JSON.stringify(level[1])},"${seq}"]`;
  // 17 digits, counting up per market (the documented ids start 1106...).
  const tradeId = (n: number) => `1106${String(n).padStart(13, '0')}`;
  return {
    id: 'kucoin',
    market: (base) => ({ symbol: `${base}-USDT`, quote: 'USDT' }),
    rest(url, markets) {
      if (url.pathname === '/api/v1/bullet-public') {
        const servers = bullet.data.instanceServers.map((s) => ({ ...s, endpoint: `ws://${url.host}/`, encrypt: false }));
        return { ...bullet, data: { ...bullet.data, instanceServers: servers } };
      }
      if (url.pathname === '/api/v1/symbols') {
        return { code: '200000', data: [...markets.values()].map((m) => ({ ...symbolPrototype, symbol: m.symbol, name: m.symbol, baseCurrency: m.base, quoteCurrency: m.quote, feeCurrency: m.quote, enableTrading: true })) };
      }
      if (url.pathname === '/api/v1/market/orderbook/level2_100') {
        const m = bySymbol(markets, url.searchParams.get('symbol'));
        return m && { ...depth, data: { ...depth!.data, time: Date.now(), sequence: String(2 * m.updateId), bids: m.bids, asks: m.asks } };
      }
      return undefined;
    },
    open: (client) => client.send(JSON.stringify(welcome)),
    message(client, text, markets) {
      const request = parseRequest(text);
      const id = request?.id;
      if (request?.type === 'ping') return client.send(JSON.stringify({ ...pong, id, timestamp: Date.now() * 1_000 }));
      const [channel, list] = String(request?.topic).split(':');
      const symbols = (list ?? '').split(',');
      if ((request?.type !== 'subscribe' && request?.type !== 'unsubscribe') || (channel !== '/market/match' && channel !== '/market/level2') || !symbols.every((s) => markets.has(s))) {
        return client.send(JSON.stringify({ id, type: 'error', code: 404, data: `topic ${String(request?.topic)} is not found` }));
      }
      for (const symbol of symbols) {
        const topic = `${channel === '/market/level2' ? 'books' : 'trades'}:${symbol}`;
        if (request.type === 'subscribe') client.topics.add(topic);
        else client.topics.delete(topic);
      }
      if (request.response === true) client.send(JSON.stringify({ ...ack, id }));
    },
    perClient: false,
    // `side` is the taker's; time in nanoseconds.
    trade: (m, t, now) => trade.render({ topic: `/market/match:${m.symbol}`, price: t.price, id: tradeId(t.n), side: t.side, size: t.quantity, symbol: m.symbol, time: `${now}000000` }),
    book(m, c, now) {
      const ask = 2 * c.id;
      return level2.render({ topic: `/market/level2:${m.symbol}`, start: ask - 1, symbol: m.symbol, asks: `[${change(c.ask, ask)}]`, bids: `[${change(c.bid, ask - 1)}]`, end: ask, time: now });
    },
    tradeId,
  };
}
