// The venues the load generator speaks, each in its own format: frames rendered from the venue's
// recorded fixtures (ingest/venues/<venue>/__fixtures__, sources in their SOURCES.md) with the
// variable fields as slots (template.ts); REST listings and book snapshots from the recorded REST
// fixtures with our markets in them. Only what the collectors use: Binance's combined stream,
// Bybit and OKX spot, Coinbase Advanced Trade. One trade per frame (Bybit, OKX and Coinbase batch
// several when busy: our messages/s is then the upper end of theirs for the same trades/s).
import { fixture } from '../../ingest/__tests__/fixtures.ts';
import { okxBookChecksum } from '../simulator/checksums.ts';
import { type BookChange, type Level, type LoadMarket, type TradePrint } from './market.ts';
import { FrameTemplate, textSlot, valueSlot } from './template.ts';

/** One websocket client of a generated venue. */
export interface LoadClient {
  /** `trades:<symbol>`, `books:<symbol>`, `heartbeats`. */
  topics: Set<string>;
  /** Connection-wide message counter (Coinbase). */
  sequence: number;
  send(text: string): void;
}

export interface LoadVenueFormat {
  /** The native venue id the collector has. */
  id: string;
  /** The venue's symbol and quote for a base ticker. */
  market(base: string): { symbol: string; quote: string };
  /** A REST request: the JSON body to answer, undefined for 404. */
  rest(url: URL, markets: ReadonlyMap<string, LoadMarket>): unknown;
  /** A frame from the client: subscriptions (into `client.topics`) and pings, answered through `client.send`. */
  message(client: LoadClient, text: string, markets: ReadonlyMap<string, LoadMarket>): void;
  /** Frames that carry a per-connection counter are rendered for each client; the others once. */
  perClient: boolean;
  trade(m: LoadMarket, t: TradePrint, now: number, client: LoadClient): string;
  book(m: LoadMarket, change: BookChange, now: number, client: LoadClient): string;
  /** Once a second to clients subscribed to `heartbeats`. */
  heartbeat?(now: number, client: LoadClient): string;
  /** The trade id the collector stores for trade number `n` of a market. */
  tradeId(n: number): string;
}

const recorded = <T>(venue: string, name: string) => structuredClone(fixture(venue, name)) as T;
const levelsJson = (levels: readonly Level[]) => JSON.stringify(levels);
const parseRequest = (text: string): Record<string, unknown> | undefined => {
  try {
    const json: unknown = JSON.parse(text);
    return typeof json === 'object' && json !== null ? (json as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
};
const bySymbol = (markets: ReadonlyMap<string, LoadMarket>, symbol: unknown) => (typeof symbol === 'string' ? markets.get(symbol) : undefined);

// Binance spot: https://developers.binance.com/docs/binance-spot-api-docs/web-socket-streams
function binanceFormat(): LoadVenueFormat {
  const [tradeFrame] = recorded<{ data: Record<string, unknown> }[]>('binance', 'ws_recorded_tardis.json');
  Object.assign(tradeFrame!, { stream: textSlot('stream') });
  Object.assign(tradeFrame!.data, { E: valueSlot('E'), s: textSlot('s'), t: valueSlot('t'), p: textSlot('p'), q: textSlot('q'), b: valueSlot('b'), a: valueSlot('a'), T: valueSlot('T'), m: valueSlot('m') });
  const [depthRecorded] = recorded<{ text: string }[]>('binance', 'ws_recorded_cryptofeed.json');
  const depthFrame = JSON.parse(depthRecorded!.text) as { data: Record<string, unknown> };
  Object.assign(depthFrame, { stream: textSlot('stream') });
  Object.assign(depthFrame.data, { E: valueSlot('E'), s: textSlot('s'), U: valueSlot('U'), u: valueSlot('u'), b: valueSlot('b'), a: valueSlot('a') });
  const trade = new FrameTemplate(tradeFrame);
  const depth = new FrameTemplate(depthFrame);
  const exchangeInfo = recorded<{ symbols: Record<string, unknown>[] }>('binance', 'rest_exchange_info.json');
  const snapshot = recorded<Record<string, unknown>>('binance', 'rest_depth_snapshot.json');
  const lower = new Map<string, string>();
  const streamName = (m: LoadMarket) => lower.get(m.symbol) ?? lower.set(m.symbol, m.symbol.toLowerCase()).get(m.symbol)!;
  return {
    id: 'binance',
    market: (base) => ({ symbol: `${base}USDT`, quote: 'USDT' }),
    rest(url, markets) {
      if (url.pathname === '/api/v3/exchangeInfo') {
        const [prototype] = exchangeInfo.symbols;
        const symbols = [...markets.values()].map((m) => ({ ...prototype, symbol: m.symbol, status: 'TRADING', baseAsset: m.base, quoteAsset: m.quote }));
        return { ...exchangeInfo, serverTime: Date.now(), symbols };
      }
      if (url.pathname === '/api/v3/depth') {
        const m = bySymbol(markets, url.searchParams.get('symbol'));
        return m && { ...snapshot, lastUpdateId: m.updateId, bids: m.bids, asks: m.asks };
      }
      return undefined;
    },
    message(client, text, markets) {
      const request = parseRequest(text);
      if (request?.method !== 'SUBSCRIBE' || !Array.isArray(request.params)) return client.send(JSON.stringify({ error: { code: 2, msg: 'Invalid request' }, id: request?.id ?? null }));
      for (const stream of request.params.map(String)) {
        const [name, channel] = stream.split('@');
        const m = bySymbol(markets, name?.toUpperCase());
        if (m) client.topics.add(`${channel === 'trade' ? 'trades' : 'books'}:${m.symbol}`);
      }
      client.send(JSON.stringify({ result: null, id: request.id }));
    },
    perClient: false,
    trade: (m, t, now) =>
      trade.render({ stream: `${streamName(m)}@trade`, E: now + 1, s: m.symbol, t: t.n, p: t.price, q: t.quantity, b: 2 * t.n, a: 2 * t.n + 1, T: now, m: t.side === 'sell' ? 'true' : 'false' }),
    book: (m, c, now) => depth.render({ stream: `${streamName(m)}@depth@100ms`, E: now, s: m.symbol, U: c.id, u: c.id, b: levelsJson([c.bid]), a: levelsJson([c.ask]) }),
    tradeId: (n) => String(n),
  };
}

// Bybit v5 spot: https://bybit-exchange.github.io/docs/v5/ws/connect
function bybitFormat(): LoadVenueFormat {
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

// OKX v5 spot: https://www.okx.com/docs-v5/en/#overview-websocket
function okxFormat(): LoadVenueFormat {
  const session = recorded<{ text: string }[]>('okx', 'ws_recorded_cryptofeed.json').map((f) => JSON.parse(f.text) as Record<string, unknown>);
  const tradeFrame = session.find((f) => (f.arg as { channel?: string } | undefined)?.channel === 'trades' && !f.event)!;
  Object.assign(tradeFrame, { arg: { channel: 'trades', instId: textSlot('instId') } });
  Object.assign((tradeFrame.data as object[])[0]!, { instId: textSlot('instId'), tradeId: textSlot('tradeId'), px: textSlot('px'), sz: textSlot('sz'), side: textSlot('side'), ts: textSlot('ts') });
  // The recording predates OKX's seqId/prevSeqId; they are added as the venue sends them now.
  const bookFrame = (action: string) => {
    const frame = session.find((f) => f.action === action)!;
    Object.assign(frame, { arg: { channel: 'books', instId: textSlot('instId') } });
    Object.assign((frame.data as object[])[0]!, { asks: valueSlot('asks'), bids: valueSlot('bids'), ts: textSlot('ts'), checksum: valueSlot('checksum'), prevSeqId: valueSlot('prevSeqId'), seqId: valueSlot('seqId') });
    return new FrameTemplate(frame);
  };
  const trade = new FrameTemplate(tradeFrame);
  const update = bookFrame('update');
  const snapshot = bookFrame('snapshot');
  const instruments = recorded<{ data: Record<string, unknown>[] }>('okx', 'rest_instruments_spot.json');
  const okxLevels = (levels: readonly Level[]) => JSON.stringify(levels.map(([p, q]) => [p, q, '0', '1']));
  const checksum = (m: LoadMarket) => okxBookChecksum(m.bids.slice(0, 25), m.asks.slice(0, 25));
  return {
    id: 'okx',
    market: (base) => ({ symbol: `${base}-USDT`, quote: 'USDT' }),
    rest(url, markets) {
      if (url.pathname !== '/api/v5/public/instruments' || url.searchParams.get('instType') !== 'SPOT') return undefined;
      const [prototype] = instruments.data;
      return { ...instruments, data: [...markets.values()].map((m) => ({ ...prototype, instId: m.symbol, baseCcy: m.base, quoteCcy: m.quote, state: 'live' })) };
    },
    message(client, text, markets) {
      if (text === 'ping') return client.send('pong');
      const request = parseRequest(text);
      if (request?.op !== 'subscribe' || !Array.isArray(request.args)) return client.send(JSON.stringify({ event: 'error', code: '60012', msg: 'Invalid request' }));
      for (const arg of request.args as { channel?: string; instId?: string }[]) {
        const m = bySymbol(markets, arg.instId);
        client.send(JSON.stringify({ event: 'subscribe', arg }));
        if (!m) continue;
        client.topics.add(`${arg.channel === 'books' ? 'books' : 'trades'}:${m.symbol}`);
        if (arg.channel === 'books') {
          client.send(snapshot.render({ instId: m.symbol, asks: okxLevels(m.asks), bids: okxLevels(m.bids), ts: Date.now(), checksum: checksum(m), prevSeqId: -1, seqId: m.updateId }));
        }
      }
    },
    perClient: false,
    trade: (m, t, now) => trade.render({ instId: m.symbol, tradeId: String(t.n), px: t.price, sz: t.quantity, side: t.side, ts: now }),
    book: (m, c, now) =>
      update.render({ instId: m.symbol, asks: okxLevels([c.ask]), bids: okxLevels([c.bid]), ts: now, checksum: checksum(m), prevSeqId: c.prevId, seqId: c.id }),
    tradeId: (n) => String(n),
  };
}

// Coinbase Advanced Trade: https://docs.cdp.coinbase.com/coinbase-app/advanced-trade-apis/websocket/websocket-channels
function coinbaseFormat(): LoadVenueFormat {
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
  // One ISO time per millisecond, not one per frame.
  let isoAt = 0;
  let iso = '';
  const isoTime = (now: number) => (now === isoAt ? iso : ((isoAt = now), (iso = new Date(now).toISOString())));
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

export const loadVenueFormats: Record<string, () => LoadVenueFormat> = { binance: binanceFormat, bybit: bybitFormat, okx: okxFormat, coinbase: coinbaseFormat };
