// Binance spot: https://developers.binance.com/docs/binance-spot-api-docs/web-socket-streams
// The combined-stream subscriptions and the REST listing and depth snapshot are the same on USD-M
// futures (binance-futures.ts), under other paths.
import type { LoadMarket } from '../market.ts';
import { FrameTemplate, textSlot, valueSlot } from '../template.ts';
import { bySymbol, levelsJson, parseRequest, recorded, recordedSession, type LoadVenueFormat } from './format.ts';

/** SUBSCRIBE requests to `<symbol>@<channel>` streams: `tradeChannel` carries trades, any other market stream the book. */
export function binanceSubscriptions(tradeChannel: string): LoadVenueFormat['message'] {
  return (client, text, markets) => {
    const request = parseRequest(text);
    if (request?.method !== 'SUBSCRIBE' || !Array.isArray(request.params)) return client.send(JSON.stringify({ error: { code: 2, msg: 'Invalid request' }, id: request?.id ?? null }));
    for (const stream of request.params.map(String)) {
      const [name, channel] = stream.split('@');
      const m = bySymbol(markets, name?.toUpperCase());
      if (m) client.topics.add(`${channel === tradeChannel ? 'trades' : 'books'}:${m.symbol}`);
    }
    client.send(JSON.stringify({ result: null, id: request.id }));
  };
}

/**
 * `<prefix>/exchangeInfo` (our markets, written as the recorded listing's first symbol) and
 * `<prefix>/depth` (the market's book at its update id; USD-M's also carries its times).
 */
export function binanceRest(prefix: string, exchangeInfo: { symbols: Record<string, unknown>[] }, snapshot: Record<string, unknown>): LoadVenueFormat['rest'] {
  return (url, markets) => {
    if (url.pathname === `${prefix}/exchangeInfo`) {
      const [prototype] = exchangeInfo.symbols;
      // USD-M names each contract's pair too: the symbol, for perpetuals.
      const symbols = [...markets.values()].map((m) => ({ ...prototype, ...(prototype && 'pair' in prototype ? { pair: m.symbol } : {}), symbol: m.symbol, status: 'TRADING', baseAsset: m.base, quoteAsset: m.quote }));
      return { ...exchangeInfo, serverTime: Date.now(), symbols };
    }
    if (url.pathname === `${prefix}/depth`) {
      const m = bySymbol(markets, url.searchParams.get('symbol'));
      const now = Date.now();
      return m && { ...snapshot, ...('E' in snapshot ? { E: now, T: now } : {}), lastUpdateId: m.updateId, bids: m.bids, asks: m.asks };
    }
    return undefined;
  };
}

/** Stream names are symbols in lower case: made once per market. */
export function streamNames(): (m: LoadMarket) => string {
  const lower = new Map<string, string>();
  return (m) => lower.get(m.symbol) ?? lower.set(m.symbol, m.symbol.toLowerCase()).get(m.symbol)!;
}

export function binanceFormat(): LoadVenueFormat {
  const [tradeFrame] = recorded<{ data: Record<string, unknown> }[]>('binance', 'ws_recorded_tardis.json');
  Object.assign(tradeFrame!, { stream: textSlot('stream') });
  Object.assign(tradeFrame!.data, { E: valueSlot('E'), s: textSlot('s'), t: valueSlot('t'), p: textSlot('p'), q: textSlot('q'), b: valueSlot('b'), a: valueSlot('a'), T: valueSlot('T'), m: valueSlot('m') });
  const [depthFrame] = recordedSession<{ data: Record<string, unknown> }>('binance', 'ws_recorded_cryptofeed.json');
  Object.assign(depthFrame!, { stream: textSlot('stream') });
  Object.assign(depthFrame!.data, { E: valueSlot('E'), s: textSlot('s'), U: valueSlot('U'), u: valueSlot('u'), b: valueSlot('b'), a: valueSlot('a') });
  const trade = new FrameTemplate(tradeFrame);
  const depth = new FrameTemplate(depthFrame);
  const streamName = streamNames();
  return {
    id: 'binance',
    market: (base) => ({ symbol: `${base}USDT`, quote: 'USDT' }),
    rest: binanceRest('/api/v3', recorded('binance', 'rest_exchange_info.json'), recorded('binance', 'rest_depth_snapshot.json')),
    message: binanceSubscriptions('trade'),
    perClient: false,
    trade: (m, t, now) =>
      trade.render({ stream: `${streamName(m)}@trade`, E: now + 1, s: m.symbol, t: t.n, p: t.price, q: t.quantity, b: 2 * t.n, a: 2 * t.n + 1, T: now, m: t.side === 'sell' ? 'true' : 'false' }),
    book: (m, c, now) => depth.render({ stream: `${streamName(m)}@depth@100ms`, E: now, s: m.symbol, U: c.id, u: c.id, b: levelsJson([c.bid]), a: levelsJson([c.ask]) }),
    tradeId: (n) => String(n),
  };
}
