// OKX v5 public websocket: https://www.okx.com/docs-v5/en/#overview-websocket
// Channels: trades, books (snapshot + updates chained by seqId/prevSeqId, CRC32 checksum of the top
// 25 levels), liquidation-orders (per instrument type). Instruments and contract values (ctVal):
// GET /api/v5/public/instruments. Trade history: GET /api/v5/market/history-trades
// (https://www.okx.com/docs-v5/en/#order-book-trading-market-data-get-trades-history), per fill.
import { crc32 } from 'node:zlib';
import { z } from 'zod';
import { decimalProduct } from '../decimal.ts';
import type { OrderBook, RawLevel } from '../orderBook.ts';
import { batches, catalogued, integerTradeNumber, parseJson, unknown, type BookRule, type HistoryCursor, type HistoryPage, type MarketListing, type TradeHistoryRule, type VenueDescriptor, type VenueEndpoints, type VenueIo, type VenueMarket, type VenueMessage } from '../venue.ts';

const levels = z.array(z.tuple([z.string(), z.string()]).rest(z.string()));
const arg = z.object({ channel: z.string(), instId: z.string().optional(), instType: z.string().optional() }).loose();
const event = z.object({ event: z.string(), code: z.string().optional(), msg: z.string().optional(), arg: arg.optional() }).loose();
const trades = z.object({
  arg: arg.extend({ channel: z.literal('trades') }),
  data: z.array(z.object({ instId: z.string(), tradeId: z.string(), px: z.string(), sz: z.string(), side: z.enum(['buy', 'sell']), ts: z.string(), count: z.string().optional() }).loose()),
});
/** history-trades rows: one per fill, no `count`. */
const historyTrades = z.object({
  code: z.literal('0'),
  data: z.array(z.object({ instId: z.string(), tradeId: z.string(), px: z.string(), sz: z.string(), side: z.enum(['buy', 'sell']), ts: z.string() }).loose()),
});
const books = z.object({
  arg: arg.extend({ channel: z.literal('books'), instId: z.string() }),
  action: z.enum(['snapshot', 'update']),
  data: z.array(z.object({ asks: levels, bids: levels, ts: z.string(), checksum: z.number().optional(), seqId: z.number(), prevSeqId: z.number() }).loose()),
});
const liquidations = z.object({
  arg: arg.extend({ channel: z.literal('liquidation-orders') }),
  data: z.array(
    z
      .object({
        instId: z.string(),
        details: z.array(z.object({ side: z.enum(['buy', 'sell']), posSide: z.string(), bkPx: z.string(), sz: z.string(), ts: z.string() }).loose()),
      })
      .loose(),
  ),
});
const instruments = z.object({
  code: z.string(),
  data: z.array(
    z
      .object({
        instId: z.string(),
        state: z.string(),
        baseCcy: z.string().optional(),
        quoteCcy: z.string().optional(),
        ctType: z.string().optional(),
        ctVal: z.string().optional(),
        ctMult: z.string().optional(),
        ctValCcy: z.string().optional(),
        settleCcy: z.string().optional(),
        uly: z.string().optional(),
      })
      .loose(),
  ),
});

const toRaw = (raw: z.infer<typeof levels>): RawLevel[] => raw.map(([p, q]) => [p, q]);
const millis = (ts: string) => Number.parseInt(ts, 10);
/** A trade id as its number in the instrument's sequence (OKX numbers each instrument's fills consecutively). */
const numberOf = (tradeId: string) => (/^\d{1,15}$/.test(tradeId) ? { seq: Number(tradeId) } : {});
/** Fills a `trades` push aggregates (`count`); absent in pushes recorded before OKX added it. */
const fillsOf = (count: string | undefined) => (count !== undefined && /^[1-9]\d{0,5}$/.test(count) ? { fills: Number(count) } : {});

/** Live spot pairs, or live linear swaps with their contract value in base units (ctVal x ctMult). */
export function parseInstruments(json: unknown, instType: 'SPOT' | 'SWAP'): MarketListing[] {
  const out: MarketListing[] = [];
  for (const i of instruments.parse(json).data) {
    if (i.state !== 'live') continue;
    if (instType === 'SPOT') {
      if (i.baseCcy && i.quoteCcy) out.push({ symbol: i.instId, base: i.baseCcy, quote: i.quoteCcy, contractSize: '1' });
      continue;
    }
    // Inverse swaps count in USD per contract: not base units, not collected.
    const quote = i.uly?.split('-')[1];
    if (i.ctType !== 'linear' || !i.ctVal || !i.ctValCcy || !quote) continue;
    const contractSize = !i.ctMult || i.ctMult === '1' ? i.ctVal : String(decimalProduct(i.ctVal, i.ctMult));
    out.push({ symbol: i.instId, base: i.ctValCcy, quote, contractSize });
  }
  return out;
}

/**
 * OKX's book checksum: the top 25 levels interleaved bid, ask, bid, ask... (a side that runs out
 * leaves the other to continue), each as `price:size` in the venue's own strings, joined with
 * ':' and hashed with CRC32 as a signed 32-bit integer.
 */
export function okxChecksum(book: OrderBook): number {
  const bids = book.topRaw('bid', 25);
  const asks = book.topRaw('ask', 25);
  const parts: string[] = [];
  for (let i = 0; i < 25; i++) {
    const bid = bids[i];
    const ask = asks[i];
    if (bid) parts.push(`${bid[0]}:${bid[1]}`);
    if (ask) parts.push(`${ask[0]}:${ask[1]}`);
  }
  return crc32(parts.join(':')) | 0;
}

export function parseOkx(text: string): VenueMessage[] {
  if (text === 'pong') return [{ kind: 'control', what: 'pong' }];
  const json = parseJson(text) as Record<string, unknown> | undefined;
  if (typeof json !== 'object' || json === null) return unknown;
  if (typeof json.event === 'string') {
    const e = event.safeParse(json);
    if (!e.success) return unknown;
    switch (e.data.event) {
      case 'subscribe':
      case 'unsubscribe':
        return [{ kind: 'control', what: 'ack' }];
      case 'error':
        return [{ kind: 'control', what: 'error', detail: `${e.data.code}: ${e.data.msg}` }];
      // 64008: "The connection will soon be closed for a service upgrade. Please reconnect."
      case 'notice':
        return [{ kind: 'control', what: e.data.code === '64008' ? 'reconnect' : 'status', detail: `${e.data.code}: ${e.data.msg}` }];
      default:
        return [{ kind: 'control', what: 'status', detail: e.data.event }];
    }
  }
  const channel = (json.arg as { channel?: unknown } | undefined)?.channel;
  if (channel === 'trades') {
    const t = trades.safeParse(json);
    if (!t.success) return unknown;
    // `side` is the taker's. A push can aggregate fills of one taker order at one price: `tradeId` is the
    // last of its `count` fills ("tradeId = 123 and count = 3 ... aggregates 123, 122 and 121").
    return t.data.data.map((d) => ({
      kind: 'trade', symbol: d.instId, tradeId: d.tradeId, ...numberOf(d.tradeId), ...fillsOf(d.count), price: d.px, quantity: d.sz, side: d.side, ts: millis(d.ts),
    }));
  }
  if (channel === 'books') {
    const b = books.safeParse(json);
    if (!b.success) return unknown;
    const instId = b.data.arg.instId;
    return b.data.data.map((d) => ({
      kind: 'book',
      symbol: instId,
      snapshot: b.data.action === 'snapshot',
      bids: toRaw(d.bids),
      asks: toRaw(d.asks),
      ts: millis(d.ts),
      lastId: d.seqId,
      prevId: d.prevSeqId,
      // OKX announced the field would be 0 once deprecated: 0 checks nothing.
      ...(d.checksum ? { checksum: d.checksum } : {}),
    }));
  }
  if (channel === 'liquidation-orders') {
    const l = liquidations.safeParse(json);
    if (!l.success) return unknown;
    return l.data.data.flatMap((d) =>
      d.details.map((x): VenueMessage => ({
        kind: 'liquidation',
        symbol: d.instId,
        liquidationId: `${x.ts}-${x.side}-${x.sz}@${x.bkPx}`,
        // The bankruptcy price: OKX publishes no fill price.
        price: x.bkPx,
        quantity: x.sz,
        // posSide names the position in long/short mode; in net mode a forced sell closes a long.
        positionSide: x.posSide === 'long' || x.posSide === 'short' ? x.posSide : x.side === 'sell' ? 'long' : 'short',
        ts: millis(x.ts),
      })),
    );
  }
  return unknown;
}

/** Arguments per subscribe request: OKX caps a request at 64 KB. */
const argsPerMessage = 100;
/** Markets per connection: OKX caps subscription requests per connection and hour (480). */
const marketsPerSocket = 150;

const book: BookRule = {
  // Each update names the seqId of the one before it; a snapshot starts the chain.
  sequence: (lastId, update) => (update.prevId === lastId ? 'apply' : (update.lastId ?? Infinity) <= lastId ? 'stale' : 'gap'),
  checksum: okxChecksum,
  resubscribe: (symbols) => {
    const args = symbols.map((instId) => ({ channel: 'books', instId }));
    return batches(args, argsPerMessage).flatMap((a) => [JSON.stringify({ op: 'unsubscribe', args: a }), JSON.stringify({ op: 'subscribe', args: a })]);
  },
};

function okxSockets(endpoints: VenueEndpoints, markets: readonly VenueMarket[], extraArgs: readonly object[]) {
  return batches(markets, marketsPerSocket).map((group, i) => {
    const args = [...group.flatMap((m) => [{ channel: 'trades', instId: m.symbol }, { channel: 'books', instId: m.symbol }]), ...(i === 0 ? extraArgs : [])];
    return {
      url: `${endpoints.ws}/ws/v5/public`,
      symbols: group.map((m) => m.symbol),
      subscribe: batches(args, argsPerMessage).map((a) => JSON.stringify({ op: 'subscribe', args: a })),
    };
  });
}

const listInstruments = (instType: 'SPOT' | 'SWAP') => async (io: VenueIo, endpoints: VenueEndpoints) =>
  parseInstruments(await io.getJson(`${endpoints.rest}/api/v5/public/instruments?instType=${instType}`), instType);

/** Fills a history-trades page holds: the most it serves. */
const historyPageSize = 100;

/**
 * history-trades pages backwards: `after` = older than, `before` = newer than (tradeIds, `type=1`).
 * The fills after trade L are asked as newer than L and older than L + 1 + a page: ids are
 * consecutive, so that is the page right after L. Without a number only the latest page can be asked.
 */
function historyTradesUrl(rest: string, symbol: string, after: HistoryCursor): string {
  const range = after.seq === undefined ? '' : `&before=${after.seq}&after=${after.seq + 1 + historyPageSize}`;
  return `${rest}/api/v5/market/history-trades?instId=${encodeURIComponent(symbol)}&type=1&limit=${historyPageSize}${range}`;
}

/**
 * One page, newest first, one fill per row. An empty page found nothing after the cursor; any other
 * may have more after it (the page alone cannot tell: it holds no cursor).
 */
export function parseHistoryTrades(json: unknown): HistoryPage | undefined {
  const page = historyTrades.safeParse(json);
  if (!page.success) return undefined;
  return {
    trades: page.data.data.map((d) => ({ kind: 'trade', symbol: d.instId, tradeId: d.tradeId, ...numberOf(d.tradeId), price: d.px, quantity: d.sz, side: d.side, ts: millis(d.ts) })),
    more: page.data.data.length > 0,
  };
}

const history: TradeHistoryRule = {
  // Fills are numbered consecutively per instrument: recorded pushes run 338476307, 338476308... (before
  // `count`); a push that aggregates covers tradeId - count + 1 .. tradeId (OKX v5 docs, trades channel).
  continuity: 'sequential',
  // The stored trade id is the trade's number: a restart's recovery starts from it.
  seqOf: integerTradeNumber,
  rest: {
    // "from the last 3 months with pagination" (docs); a live probe found 60 to 90 days (third-party, 2026-10).
    reachMs: 90 * 86_400_000,
    // 20 requests per 2 s per IP in the current docs, 10 per 2 s in older SDK copies: under both.
    requestsPerSecond: 4,
    url: historyTradesUrl,
    parse: parseHistoryTrades,
  },
};

const shared = {
  docs: 'https://www.okx.com/docs-v5/en/#overview-websocket',
  endpoints: { ws: 'wss://ws.okx.com:8443', rest: 'https://www.okx.com' },
  // A text "ping" under 30 s of silence keeps the socket; the venue drops it after 30 s without traffic.
  keepAlive: { pingEveryMs: 20_000, message: 'ping', staleAfterMs: 45_000 },
  sendsPerSecond: 5,
  // 3 connection requests a second per address (OKX's v5 WebSocket docs, as research/venues.md gives
  // them), spot and swaps alike.
  connectLimit: { connections: 3, windowMs: 1_000, scope: 'okx' },
  // 480 subscribe, unsubscribe and login requests per connection per hour (research/venues.md).
  subscribesPerHour: 480,
  parse: parseOkx,
  book,
  history,
} satisfies Partial<VenueDescriptor>;

export const okx: VenueDescriptor = {
  ...catalogued('okx'),
  ...shared,
  channels: ['trades', 'books'],
  quotes: ['USDT', 'USDC', 'USD'],
  listMarkets: listInstruments('SPOT'),
  sockets: (endpoints, markets) => okxSockets(endpoints, markets, []),
};

export const okxSwap: VenueDescriptor = {
  ...catalogued('okx-swap'),
  ...shared,
  channels: ['trades', 'books', 'liquidations'],
  liquidations: { sampled: true, rule: 'liquidation-orders: at most one liquidation order per contract per second' },
  quotes: ['USDT', 'USDC'],
  listMarkets: listInstruments('SWAP'),
  sockets: (endpoints, markets) => okxSockets(endpoints, markets, [{ channel: 'liquidation-orders', instType: 'SWAP' }]),
};
