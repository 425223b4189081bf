// Bybit v5 public websocket: https://bybit-exchange.github.io/docs/v5/ws/connect
// Topics: publicTrade, orderbook.50 (snapshot + deltas; `u` is a per-topic update id that is
// normally continuous; a new snapshot, u = 1 after a service restart included, replaces the book),
// allLiquidation (every liquidation, in 500 ms batches). Instruments: GET /v5/market/instruments-info.
// Trade history: GET /v5/market/recent-trade serves the latest trades only (spot at most 60, linear
// at most 1000), with no cursor and no time window (bybit-exchange/docs@072c197
// docs/v5/market/recent-trade.mdx). Trade ids (execId, the websocket's `i`) are UUIDs on linear and
// shared by all symbols on spot: they say nothing of what is missing, so gaps are found by time.
import { z } from 'zod';
import type { RawLevel } from '../orderBook.ts';
import {
  batches,
  catalogued,
  parseJson,
  unknown,
  type HistoryPage,
  type MarketListing,
  type TradeHistoryRule,
  type VenueDescriptor,
  type VenueEndpoints,
  type VenueIo,
  type VenueMarket,
  type VenueMessage,
} from '../venue.ts';

type Category = 'spot' | 'linear';

const levels = z.array(z.tuple([z.string(), z.string()]));
const reply = z.object({ op: z.string(), success: z.boolean().optional(), ret_msg: z.string().optional() }).loose();
const trades = z.object({
  topic: z.string(),
  data: z.array(z.object({ T: z.number(), s: z.string(), S: z.enum(['Buy', 'Sell']), v: z.string(), p: z.string(), i: z.string() }).loose()),
});
const orderbook = z.object({
  topic: z.string(),
  type: z.enum(['snapshot', 'delta']),
  ts: z.number(),
  cts: z.number().optional(),
  data: z.object({ s: z.string(), b: levels, a: levels, u: z.number() }).loose(),
});
const allLiquidation = z.object({
  topic: z.string(),
  data: z.array(z.object({ T: z.number(), s: z.string(), S: z.enum(['Buy', 'Sell']), v: z.string(), p: z.string() }).loose()),
});
// A refused request comes with an empty (or null) result: only retCode and retMsg say why.
const restReply = z.object({ retCode: z.number(), retMsg: z.string().optional(), result: z.unknown() });
const instruments = z.object({
  list: z.array(z.object({ symbol: z.string(), status: z.string(), baseCoin: z.string(), quoteCoin: z.string(), contractType: z.string().optional() }).loose()),
  nextPageCursor: z.string().optional(),
});

const recentTrades = z.object({
  list: z.array(z.object({ execId: z.string().min(1), symbol: z.string(), price: z.string(), size: z.string(), side: z.enum(['Buy', 'Sell']), time: z.string().regex(/^\d+$/) }).loose()),
});

const toRaw = (raw: z.infer<typeof levels>): RawLevel[] => raw.map(([p, q]) => [p, q]);

/** One page of instruments: trading spot pairs, or trading linear perpetuals (not dated futures). */
export function parseInstruments(json: unknown, category: Category): { listings: MarketListing[]; nextPageCursor: string | undefined } {
  const reply = restReply.parse(json);
  if (reply.retCode !== 0) throw new Error(`instruments-info: ${reply.retCode} ${reply.retMsg ?? ''}`);
  const page = instruments.parse(reply.result);
  const listings = page.list
    .filter((i) => i.status === 'Trading' && (category === 'spot' || i.contractType === 'LinearPerpetual'))
    .map((i) => ({ symbol: i.symbol, base: i.baseCoin, quote: i.quoteCoin, contractSize: '1' }));
  return { listings, nextPageCursor: page.nextPageCursor || undefined };
}

export function parseBybit(text: string): VenueMessage[] {
  const json = parseJson(text) as Record<string, unknown> | undefined;
  if (typeof json !== 'object' || json === null) return unknown;
  const topic = json.topic;
  if (typeof topic !== 'string') {
    const r = reply.safeParse(json);
    if (!r.success) return unknown;
    if (r.data.op === 'pong' || r.data.ret_msg === 'pong') return [{ kind: 'control', what: 'pong' }];
    if (r.data.success === false) return [{ kind: 'control', what: 'error', detail: `${r.data.op}: ${r.data.ret_msg}` }];
    return [{ kind: 'control', what: 'ack' }];
  }
  if (topic.startsWith('publicTrade.')) {
    const t = trades.safeParse(json);
    if (!t.success) return unknown;
    // S is the taker's side.
    return t.data.data.map((d) => ({ kind: 'trade', symbol: d.s, tradeId: d.i, price: d.p, quantity: d.v, side: d.S === 'Buy' ? 'buy' : 'sell', ts: d.T }));
  }
  if (topic.startsWith('orderbook.')) {
    const b = orderbook.safeParse(json);
    if (!b.success) return unknown;
    const d = b.data.data;
    return [{ kind: 'book', symbol: d.s, snapshot: b.data.type === 'snapshot', bids: toRaw(d.b), asks: toRaw(d.a), lastId: d.u, ts: b.data.cts ?? b.data.ts }];
  }
  if (topic.startsWith('allLiquidation.')) {
    const l = allLiquidation.safeParse(json);
    if (!l.success) return unknown;
    return l.data.data.map((d) => ({
      kind: 'liquidation',
      symbol: d.s,
      liquidationId: `${d.T}-${d.S}-${d.v}@${d.p}`,
      price: d.p,
      quantity: d.v,
      // Unlike Binance and OKX, S is the side of the POSITION: Buy means a long was liquidated.
      positionSide: d.S === 'Buy' ? 'long' : 'short',
      ts: d.T,
    }));
  }
  return unknown;
}

/** The most trades recent-trade serves per market (its `limit` maximum): the latest, nothing older. */
const recentTradeDepth: Record<Category, number> = { spot: 60, linear: 1000 };

/** One recent-trade answer: the market's latest trades (newest first), never more (`more` false). Undefined for a refusal or another market's trades. */
export function parseRecentTrades(json: unknown, symbol: string): HistoryPage | undefined {
  const reply = restReply.safeParse(json);
  if (!reply.success || reply.data.retCode !== 0) return undefined;
  const page = recentTrades.safeParse(reply.data.result);
  if (!page.success || page.data.list.some((t) => t.symbol !== symbol)) return undefined;
  // side is the taker's, as on the websocket; size in base units on spot and linear alike.
  const trades = page.data.list.map((t) => ({ kind: 'trade' as const, symbol, tradeId: t.execId, price: t.price, quantity: t.size, side: t.side === 'Buy' ? ('buy' as const) : ('sell' as const), ts: Number(t.time) }));
  return { trades, more: false };
}

function tradeHistory(category: Category): TradeHistoryRule {
  return {
    continuity: 'time',
    // Spot ids are integers rising across the venue's markets; linear ids are UUIDs (placed by time).
    ...(category === 'spot' ? { idsRise: true } : {}),
    rest: {
      latestOnly: recentTradeDepth[category],
      // Bybit's IP limit is 600 requests in 5 s (docs/v5/rate-limit/rate-limit.mdx); one request recovers a gap.
      requestsPerSecond: 10,
      // No cursor: the latest trades are all there is.
      url: (restBase, symbol) => `${restBase}/v5/market/recent-trade?category=${category}&symbol=${encodeURIComponent(symbol)}&limit=${recentTradeDepth[category]}`,
      parse: parseRecentTrades,
    },
  };
}

/** Spot accepts at most 10 arguments per subscribe request. */
const argsPerMessage = 10;
/** A connection's arguments may total 21,000 characters: 200 markets of three topics stay well under. */
const marketsPerSocket = 200;

const subscribeMessages = (op: 'subscribe' | 'unsubscribe', args: readonly string[]) =>
  batches(args, argsPerMessage).map((a, i) => JSON.stringify({ op, args: a, req_id: `${op}-${i + 1}` }));

function bybitSockets(endpoints: VenueEndpoints, category: Category, markets: readonly VenueMarket[]) {
  return batches(markets, marketsPerSocket).map((group) => ({
    url: `${endpoints.ws}/v5/public/${category}`,
    symbols: group.map((m) => m.symbol),
    subscribe: subscribeMessages(
      'subscribe',
      group.flatMap((m) => [`publicTrade.${m.symbol}`, `orderbook.50.${m.symbol}`, ...(category === 'linear' ? [`allLiquidation.${m.symbol}`] : [])]),
    ),
  }));
}

const listInstruments = (category: Category) => async (io: VenueIo, endpoints: VenueEndpoints) => {
  const out: MarketListing[] = [];
  let cursor: string | undefined;
  do {
    const url = `${endpoints.rest}/v5/market/instruments-info?category=${category}&limit=1000${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
    const page = parseInstruments(await io.getJson(url), category);
    out.push(...page.listings);
    cursor = page.nextPageCursor;
  } while (cursor);
  return out;
};

const shared = {
  docs: 'https://bybit-exchange.github.io/docs/v5/ws/connect',
  endpoints: { ws: 'wss://stream.bybit.com', rest: 'https://api.bybit.com' },
  // A ping every 20 s is what Bybit asks for; it answers each with a pong.
  keepAlive: { pingEveryMs: 20_000, message: JSON.stringify({ op: 'ping' }), staleAfterMs: 45_000 },
  sendsPerSecond: 5,
  parse: parseBybit,
  book: {
    // `u` is continuous within a topic; a snapshot (any time) replaces the book.
    sequence: (lastId, update) => (update.lastId === lastId + 1 ? 'apply' : (update.lastId ?? Infinity) <= lastId ? 'stale' : 'gap'),
    depth: 50,
    resubscribe: (symbols) => {
      const args = symbols.map((s) => `orderbook.50.${s}`);
      return [...subscribeMessages('unsubscribe', args), ...subscribeMessages('subscribe', args)];
    },
  },
} satisfies Partial<VenueDescriptor>;

export const bybit: VenueDescriptor = {
  ...catalogued('bybit'),
  ...shared,
  channels: ['trades', 'books'],
  quotes: ['USDT', 'USDC'],
  listMarkets: listInstruments('spot'),
  sockets: (endpoints, markets) => bybitSockets(endpoints, 'spot', markets),
  history: tradeHistory('spot'),
};

export const bybitLinear: VenueDescriptor = {
  ...catalogued('bybit-linear'),
  ...shared,
  channels: ['trades', 'books', 'liquidations'],
  liquidations: { sampled: false, rule: 'allLiquidation: every liquidation, pushed in 500 ms batches' },
  quotes: ['USDT', 'USDC'],
  listMarkets: listInstruments('linear'),
  sockets: (endpoints, markets) => bybitSockets(endpoints, 'linear', markets),
  history: tradeHistory('linear'),
};
