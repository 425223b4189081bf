// Binance spot market streams: https://developers.binance.com/docs/binance-spot-api-docs/web-socket-streams
// Local book rules: same page, "How to manage a local order book correctly". Trade history: REST
// `GET /api/v3/historicalTrades` (https://developers.binance.com/docs/binance-spot-api-docs/rest-api,
// "Old trade lookup"; binance/binance-spot-api-docs rest-api.md @a5e0bc3).
import { z } from 'zod';
import type { RawLevel } from '../orderBook.ts';
import { batches, catalogued, integerTradeNumber, parseJson, unknown, type BookMessage, type HistoryCursor, type HistoryPage, type MarketListing, type RestSnapshot, type SocketPlan, type TradeHistoryRule, type TradeMessage, type VenueDescriptor, type VenueMarket, type VenueMessage } from '../venue.ts';

const levels = z.array(z.tuple([z.string(), z.string()]).rest(z.unknown()));
const ack = z.object({ result: z.null(), id: z.union([z.number(), z.string()]) });
const error = z.object({ error: z.object({ code: z.number(), msg: z.string() }).loose() }).loose();
const trade = z.object({ e: z.literal('trade'), s: z.string(), t: z.number(), p: z.string(), q: z.string(), T: z.number(), m: z.boolean() }).loose();
const depthUpdate = z
  .object({ e: z.literal('depthUpdate'), E: z.number(), s: z.string(), U: z.number(), u: z.number(), pu: z.number().optional(), b: levels, a: levels })
  .loose();
const depthSnapshot = z.object({ lastUpdateId: z.number(), bids: levels, asks: levels }).loose();
const historicalTrade = z.object({ id: z.number(), price: z.string(), qty: z.string(), time: z.number(), isBuyerMaker: z.boolean() }).loose();
const exchangeInfo = z.object({
  symbols: z.array(z.object({ symbol: z.string(), status: z.string(), baseAsset: z.string(), quoteAsset: z.string(), contractType: z.string().optional() }).loose()),
});

const toRaw = (raw: z.infer<typeof levels>): RawLevel[] => raw.map(([p, q]) => [p, q]);

/** Spot and USD-M futures `exchangeInfo`: trading symbols, optionally of one contract type. */
export function parseExchangeInfo(json: unknown, contractType?: string): MarketListing[] {
  return exchangeInfo
    .parse(json)
    .symbols.filter((s) => s.status === 'TRADING' && (contractType === undefined || s.contractType === contractType))
    .map((s) => ({ symbol: s.symbol, base: s.baseAsset, quote: s.quoteAsset, contractSize: '1' }));
}

export function parseDepthSnapshot(json: unknown): RestSnapshot {
  const s = depthSnapshot.parse(json);
  return { lastId: s.lastUpdateId, bids: toRaw(s.bids), asks: toRaw(s.asks) };
}

/**
 * Sockets for a set of streams: a market's streams stay on one socket, at most `perSocket` streams
 * each, subscribed `perMessage` at a time.
 */
export function binanceSockets(
  url: string,
  markets: readonly VenueMarket[],
  streamsOf: (m: VenueMarket) => string[],
  limits: { perSocket: number; perMessage: number },
  extraStreams: readonly string[] = [],
): SocketPlan[] {
  if (markets.length === 0) return [];
  const perMarket = Math.max(1, streamsOf(markets[0]!).length);
  const marketsPerSocket = Math.max(1, Math.floor((limits.perSocket - extraStreams.length) / perMarket));
  return batches(markets, marketsPerSocket).map((group, i) => {
    const streams = [...group.flatMap(streamsOf), ...(i === 0 ? extraStreams : [])];
    return {
      url,
      symbols: group.map((m) => m.symbol),
      subscribe: batches(streams, limits.perMessage).map((params, id) => JSON.stringify({ method: 'SUBSCRIBE', params, id: id + 1 })),
    };
  });
}

/**
 * The messages both Binance stream APIs share: acks, errors, the shutdown notice, and the combined
 * stream envelope; `payload` parses what is inside it.
 */
export function parseBinanceFrame(text: string, payload: (data: Record<string, unknown>) => VenueMessage[] | undefined): VenueMessage[] {
  const json = parseJson(text);
  if (typeof json !== 'object' || json === null) return unknown;
  // The combined-stream envelope ({stream, data}); checked by hand, it is on every message.
  const wrapped = json as { stream?: unknown; data?: unknown };
  const data = (typeof wrapped.stream === 'string' && 'data' in wrapped ? wrapped.data : json) as Record<string, unknown>;
  if (typeof data !== 'object' || data === null) return unknown;
  const parsed = payload(data);
  if (parsed) return parsed;
  if (ack.safeParse(data).success) return [{ kind: 'control', what: 'ack' }];
  const err = error.safeParse(data);
  if (err.success) return [{ kind: 'control', what: 'error', detail: `${err.data.error.code}: ${err.data.error.msg}` }];
  // Sent before the server goes away (the stream and the WebSocket API use different envelopes).
  const event = (data as { event?: { e?: unknown } }).event ?? data;
  if (event.e === 'serverShutdown') return [{ kind: 'control', what: 'reconnect', detail: 'serverShutdown' }];
  return unknown;
}

/** A `depthUpdate` diff, spot or USD-M (whose `pu` is the previous diff's `u`). */
export function parseDepthUpdate(data: Record<string, unknown>): BookMessage | undefined {
  const d = depthUpdate.safeParse(data);
  if (!d.success) return undefined;
  const { s, U, u, pu, E, b, a } = d.data;
  return { kind: 'book', symbol: s, snapshot: false, firstId: U, lastId: u, ...(pu === undefined ? {} : { prevId: pu }), ts: E, bids: toRaw(b), asks: toRaw(a) };
}

function parseSpotPayload(data: Record<string, unknown>): VenueMessage[] | undefined {
  if (data.e === 'trade') {
    const t = trade.safeParse(data);
    if (!t.success) return undefined;
    // m = the buyer was the maker, so the taker sold. `t` numbers the symbol's trades consecutively.
    return [{ kind: 'trade', symbol: t.data.s, tradeId: String(t.data.t), seq: t.data.t, price: t.data.p, quantity: t.data.q, side: t.data.m ? 'sell' : 'buy', ts: t.data.T }];
  }
  if (data.e === 'depthUpdate') {
    const d = parseDepthUpdate(data);
    return d ? [d] : undefined;
  }
  return undefined;
}

/** Trades a page of Binance's trade histories holds (spot historicalTrades, USD-M aggTrades): the most they serve (default 500). */
export const historyPageSize = 1_000;

/**
 * One page of a Binance trade history: rows from an id up, oldest first. A full page means more may
 * follow; a shorter one reached the latest trade. Anything else (an error object) is no page.
 */
export function binanceHistoryPage<Row>(row: z.ZodType<Row>, json: unknown, toTrade: (row: Row) => TradeMessage): HistoryPage | undefined {
  const rows = z.array(row).safeParse(json);
  if (!rows.success) return undefined;
  return { trades: rows.data.map(toTrade), more: rows.data.length >= historyPageSize };
}

/** One page of `GET /api/v3/historicalTrades`: isBuyerMaker means the taker sold. */
export const parseHistoricalTrades = (json: unknown, symbol: string) =>
  binanceHistoryPage(historicalTrade, json, (t) => ({ kind: 'trade', symbol, tradeId: String(t.id), seq: t.id, price: t.price, quantity: t.qty, side: t.isBuyerMaker ? 'sell' : 'buy', ts: t.time }));

/**
 * The page after `after`: from the next trade id. Without a number (a time cursor) the endpoint has
 * no time parameter, and the latest trades are all it can give.
 */
function historicalTradesUrl(rest: string, symbol: string, after: HistoryCursor): string {
  const from = after.seq === undefined ? '' : `&fromId=${after.seq + 1}`;
  return `${rest}/api/v3/historicalTrades?symbol=${encodeURIComponent(symbol)}&limit=${historyPageSize}${from}`;
}

const history: TradeHistoryRule = {
  // `t` numbers a symbol's trades consecutively: a recorded kline counts as many trades as its first
  // and last ids span (ws_recorded_kline_cryptofeed.json), archive rows run 252195, 252196...
  // (binance-public-data#30).
  continuity: 'sequential',
  // The stored trade id is the trade's number: a restart's recovery starts from it.
  seqOf: integerTradeNumber,
  rest: {
    // Deep but not back to listing (fromId=1 on DOGEUSDT starts at 437921759: binance-public-data#376);
    // no documented bound, so none is set. No API key since 2023-07-11 (CHANGELOG).
    // Weight 25 of the IP's 6,000 a minute (4 pages a second at most); half, as depth snapshots draw on it too.
    requestsPerSecond: 2,
    url: historicalTradesUrl,
    parse: parseHistoricalTrades,
  },
};

export const binance: VenueDescriptor = {
  ...catalogued('binance'),
  docs: 'https://developers.binance.com/docs/binance-spot-api-docs/web-socket-streams',
  endpoints: { ws: 'wss://stream.binance.com:9443', rest: 'https://api.binance.com' },
  channels: ['trades', 'books'],
  quotes: ['USDT', 'USDC', 'USD'],
  listMarkets: async (io, endpoints) => parseExchangeInfo(await io.getJson(`${endpoints.rest}/api/v3/exchangeInfo`)),
  // 1024 streams per connection; a few hundred per SUBSCRIBE.
  sockets: (endpoints, markets) =>
    binanceSockets(`${endpoints.ws}/stream`, markets, (m) => [`${m.symbol.toLowerCase()}@trade`, `${m.symbol.toLowerCase()}@depth@100ms`], {
      perSocket: 1_024,
      perMessage: 200,
    }),
  // The server pings every 20 s and drops us after a minute without a pong; our own pings prove the socket alive.
  keepAlive: { pingEveryMs: 20_000, staleAfterMs: 60_000 },
  maxConnectionMs: 24 * 3_600_000,
  // 5 incoming messages per second, pongs included.
  sendsPerSecond: 4,
  // 300 connection attempts in 5 minutes per address (the spot WebSocket Streams page, as
  // research/venues.md gives it).
  connectLimit: { connections: 300, windowMs: 300_000, scope: 'binance' },
  parse: (text) => parseBinanceFrame(text, parseSpotPayload),
  book: {
    restSnapshot: {
      url: (rest, symbol) => `${rest}/api/v3/depth?symbol=${encodeURIComponent(symbol)}&limit=1000`,
      parse: parseDepthSnapshot,
    },
    // Drop diffs the snapshot holds; the first applied one straddles it; then each starts where the last ended.
    sequence(lastId, u, fresh) {
      const first = u.firstId ?? Number.NaN;
      const final = u.lastId ?? Number.NaN;
      if (final <= lastId) return 'stale';
      const next = lastId + 1;
      return (fresh ? first <= next && next <= final : first === next) ? 'apply' : 'gap';
    },
  },
  history,
};
