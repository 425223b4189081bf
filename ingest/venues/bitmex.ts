// BitMEX realtime websocket: https://www.bitmex.com/app/wsAPI
// Tables: trade (side is the taker's), orderBookL2 (a `partial` of the whole book, then rows
// inserted, updated and deleted by `id`; no sequence numbers), liquidation (liquidation orders,
// no timestamp). Keep-alive: text `ping`, answered by `pong`. Instruments:
// GET /api/v1/instrument/active. Collected: inverse perpetuals (XBTUSD), whose sizes count USD
// contracts: base = contracts x contract value / price (ingest/EVENTS.md).
// Trade history: GET /api/v1/trade?symbol&startTime&count&reverse=false, the whole history, oldest
// first from startTime (included), rows as the websocket's, at most 1000 a page; 30 requests a
// minute without a key (https://www.bitmex.com/api/explorer/#!/Trade/Trade_get; ccxt's bitmex.ts;
// the limit as BitMEX's REST page states it, quoted in ccxt#5565). Trade ids (trdMatchID) are
// UUIDs: gaps are found by time.
import { z } from 'zod';
import type { RawLevel } from '../orderBook.ts';
import {
  batches,
  catalogued,
  parseJson,
  unknown,
  type BookMessage,
  type HistoryPage,
  type MarketListing,
  type TradeMessage,
  type VenueDescriptor,
  type VenueMessage,
  type VenueSession,
} from '../venue.ts';

const instruments = z.array(
  z
    .object({
      symbol: z.string(),
      underlying: z.string(),
      quoteCurrency: z.string(),
      typ: z.string(),
      state: z.string(),
      isInverse: z.boolean(),
      multiplier: z.number().int().nullable().optional(),
      underlyingToSettleMultiplier: z.number().int().nullable().optional(),
    })
    .loose(),
);
const envelope = z.object({ table: z.string(), action: z.enum(['partial', 'insert', 'update', 'delete']), data: z.array(z.unknown()), filter: z.object({ symbol: z.string().optional() }).loose().optional() }).loose();
const side = z.enum(['Buy', 'Sell']);
const trade = z.object({ timestamp: z.iso.datetime(), symbol: z.string(), side, size: z.number().positive(), price: z.number().positive(), trdMatchID: z.string().min(1) }).loose();
const level = z.object({ symbol: z.string(), id: z.number(), side, size: z.number().optional(), price: z.number().optional() }).loose();
const liquidation = z.object({ orderID: z.string().min(1), symbol: z.string(), side, price: z.number().positive(), leavesQty: z.number().positive() }).loose();
// Made once: schemas made per message showed in the collectors' thread's profile (test/bench/RESULTS.md).
const trades = z.array(trade);
const levels = z.array(level);
const liquidations = z.array(liquidation);
const subscribed = z.object({ success: z.boolean(), subscribe: z.string().optional(), unsubscribe: z.string().optional() }).loose();
const error = z.object({ error: z.string(), status: z.number().optional() }).loose();

/** BitMEX's instrument type of perpetual swaps. */
const perpetualType = 'FFWCSX';

/**
 * Open inverse perpetuals. Contract value in quote units = |multiplier| / underlyingToSettleMultiplier
 * (XBTUSD: 100000000 / 100000000 = 1 USD); instruments where that is not a whole number are left out.
 */
export function parseInstruments(json: unknown): MarketListing[] {
  return instruments.parse(json).flatMap((i) => {
    if (!i.isInverse || i.typ !== perpetualType || i.state !== 'Open' || !i.multiplier || !i.underlyingToSettleMultiplier) return [];
    const value = Math.abs(i.multiplier) / i.underlyingToSettleMultiplier;
    if (!Number.isSafeInteger(value) || value <= 0) return [];
    return [{ symbol: i.symbol, base: i.underlying, quote: i.quoteCurrency, contractSize: String(value), inverse: true }];
  });
}

/** BitMEX sends numbers; JavaScript prints them back as the shortest decimal that round-trips, i.e. as sent. */
const decimal = (n: number) => String(n);

/** A trade row, on the websocket and in the REST history alike: `side` is the taker's, `size` in contracts. */
const tradeOf = (t: z.infer<typeof trade>): TradeMessage => ({ kind: 'trade', symbol: t.symbol, tradeId: t.trdMatchID, price: decimal(t.price), quantity: decimal(t.size), side: t.side === 'Buy' ? 'buy' : 'sell', ts: Date.parse(t.timestamp) });

/** The most rows GET /trade gives per request (its `count` maximum). */
export const tradePageSize = 1_000;

/** One GET /trade page (oldest first); a full page means the venue holds more after it. Undefined for an error or another market's rows. */
export function parseTradeHistory(json: unknown, symbol: string): HistoryPage | undefined {
  const rows = trades.safeParse(json);
  if (!rows.success || rows.data.some((t) => t.symbol !== symbol)) return undefined;
  return { trades: rows.data.map(tradeOf), more: rows.data.length >= tradePageSize };
}

/** Trades, liquidations and control frames: what needs no memory of the connection. */
function parseStateless(frame: string, e: z.infer<typeof envelope> | undefined): VenueMessage[] | undefined {
  if (!e) {
    if (frame === 'pong') return [{ kind: 'control', what: 'pong' }];
    const json = parseJson(frame);
    const s = subscribed.safeParse(json);
    if (s.success) return [{ kind: 'control', what: 'ack' }];
    const err = error.safeParse(json);
    if (err.success) return [{ kind: 'control', what: 'error', detail: `${err.data.status ?? ''}: ${err.data.error}` }];
    if (json !== null && typeof json === 'object' && 'info' in json && 'version' in json) return [{ kind: 'control', what: 'ack', detail: 'welcome' }];
    return unknown;
  }
  if (e.table === 'trade') {
    // The partial on subscription repeats recent trades: only inserts are new.
    if (e.action === 'partial') return [{ kind: 'control', what: 'status', detail: 'recent trades' }];
    if (e.action !== 'insert') return unknown;
    const rows = trades.safeParse(e.data);
    if (!rows.success) return unknown;
    return rows.data.map(tradeOf);
  }
  if (e.table === 'liquidation') {
    // A liquidation order appears (insert) with its full quantity at the bankruptcy price; its later
    // updates and deletion are the engine working it off, not new liquidations.
    if (e.action !== 'insert') return [{ kind: 'control', what: 'status', detail: `liquidation ${e.action}` }];
    const rows = liquidations.safeParse(e.data);
    if (!rows.success) return unknown;
    // A Sell order closes a long. No time is sent: the receive time stands in.
    return rows.data.map((l) => ({ kind: 'liquidation', symbol: l.symbol, liquidationId: l.orderID, price: decimal(l.price), quantity: decimal(l.leavesQty), positionSide: l.side === 'Sell' ? 'long' : 'short' }));
  }
  return undefined;
}

/** Without a connection's memory of the book rows, book frames cannot be read: they go through a session. */
export function parseBitmex(frame: string): VenueMessage[] {
  const e = envelope.safeParse(parseJson(frame));
  return parseStateless(frame, e.success ? e.data : undefined) ?? unknown;
}

/**
 * One connection's orderBookL2 rows: updates and deletes name a row by `id` only, so the price of
 * each row is remembered from its partial or insert. BitMEX numbers nothing; we number each
 * market's book messages ourselves and skip a number when a row contradicts what we hold (an
 * update of an unknown id, an insert of a known one): a lost message shows that way, and the
 * skipped number makes the book rule see a gap and resync.
 */
export function bitmexSession(): VenueSession {
  // Rows are keyed by symbol, id and side (the partial's `keys`): one price may sit on both sides in turn.
  const rows = new Map<string, Map<string, string>>();
  const numbers = new Map<string, number>();
  const next = (symbol: string, skip: boolean) => {
    const n = (numbers.get(symbol) ?? 0) + (skip ? 2 : 1);
    numbers.set(symbol, n);
    return n;
  };
  const book = (e: z.infer<typeof envelope>): VenueMessage[] => {
    const parsed = levels.safeParse(e.data);
    if (!parsed.success) return unknown;
    const bySymbol = new Map<string, z.infer<typeof level>[]>();
    if (e.action === 'partial' && e.filter?.symbol) bySymbol.set(e.filter.symbol, []);
    for (const r of parsed.data) {
      const rowsOf = bySymbol.get(r.symbol);
      if (rowsOf) rowsOf.push(r);
      else bySymbol.set(r.symbol, [r]);
    }
    const out: BookMessage[] = [];
    for (const [symbol, list] of bySymbol) {
      const bids: RawLevel[] = [];
      const asks: RawLevel[] = [];
      if (e.action === 'partial') rows.set(symbol, new Map());
      const held = rows.get(symbol);
      let broken = held === undefined;
      for (const r of list) {
        if (!held) break;
        const key = `${r.side}:${r.id}`;
        const known = held.get(key);
        let price: string;
        let size: string;
        if (e.action === 'partial' || e.action === 'insert') {
          if (known || r.price === undefined || r.size === undefined) broken = true;
          price = decimal(r.price ?? 0);
          size = decimal(r.size ?? 0);
          held.set(key, price);
        } else {
          if (!known || (e.action === 'update' && r.size === undefined)) {
            broken = true;
            continue;
          }
          price = known;
          size = e.action === 'delete' ? '0' : decimal(r.size!);
          if (e.action === 'delete') held.delete(key);
        }
        (r.side === 'Buy' ? bids : asks).push([price, size]);
      }
      const id = next(symbol, broken && e.action !== 'partial');
      out.push({ kind: 'book', symbol, snapshot: e.action === 'partial', bids, asks, firstId: id, lastId: id });
    }
    return out;
  };
  return {
    parse(frame) {
      const e = envelope.safeParse(parseJson(frame));
      const data = e.success ? e.data : undefined;
      if (data?.table === 'orderBookL2') return book(data);
      return parseStateless(frame, data) ?? unknown;
    },
  };
}

/** Topics per subscribe request. */
const argsPerMessage = 20;

const request = (op: 'subscribe' | 'unsubscribe', args: readonly string[]) => JSON.stringify({ op, args });

export const bitmex: VenueDescriptor = {
  ...catalogued('bitmex'),
  docs: 'https://www.bitmex.com/app/wsAPI',
  endpoints: { ws: 'wss://ws.bitmex.com', rest: 'https://www.bitmex.com' },
  channels: ['trades', 'books', 'liquidations'],
  liquidations: { sampled: false, rule: 'every liquidation order, as it enters the book (insert), at its full quantity and bankruptcy price' },
  quotes: ['USD'],
  listMarkets: async (io, endpoints) => parseInstruments(await io.getJson(`${endpoints.rest}/api/v1/instrument/active`)),
  // BitMEX lists few perpetuals: one socket carries them all.
  sockets: (endpoints, markets) => {
    const symbols = markets.map((m) => m.symbol);
    if (symbols.length === 0) return [];
    const args = symbols.flatMap((s) => [`trade:${s}`, `orderBookL2:${s}`, `liquidation:${s}`]);
    return [{ url: `${endpoints.ws}/realtime`, symbols, subscribe: batches(args, argsPerMessage).map((a) => request('subscribe', a)) }];
  },
  // BitMEX's advice: ping when nothing came for 5 s; a quiet market still answers `pong`.
  keepAlive: { pingEveryMs: 5_000, message: 'ping', staleAfterMs: 20_000 },
  sendsPerSecond: 10,
  parse: parseBitmex,
  session: bitmexSession,
  book: {
    // Our own numbering (see bitmexSession): a skipped number is a row that contradicted the book.
    sequence: (lastId, u) => ((u.lastId ?? Infinity) <= lastId ? 'stale' : u.firstId === lastId + 1 ? 'apply' : 'gap'),
    // A fresh partial comes with a new subscription.
    resubscribe: (symbols) => [request('unsubscribe', symbols.map((s) => `orderBookL2:${s}`)), request('subscribe', symbols.map((s) => `orderBookL2:${s}`))],
  },
  history: {
    continuity: 'time',
    rest: {
      // 30 requests a minute without a key; past it 429 (and an hour's ban for a client that keeps on).
      requestsPerSecond: 0.4,
      // Paged on the millisecond: trades that share the cursor's come again and are dropped as at or before it.
      url: (restBase, symbol, after) =>
        `${restBase}/api/v1/trade?symbol=${encodeURIComponent(symbol)}&startTime=${encodeURIComponent(new Date(after.ts).toISOString())}&count=${tradePageSize}&reverse=false`,
      parse: parseTradeHistory,
    },
  },
};
