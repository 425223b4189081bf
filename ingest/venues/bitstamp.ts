// Bitstamp websocket API v2: https://www.bitstamp.net/websocket/v2/
// Channels: live_trades_{pair} (event "trade"), order_book_{pair} (event "data": the top 100 bids
// and asks, whole, at every change). The diff channel has no sequence numbers, so a lost diff could
// never be noticed: whole books cannot drift. Pairs: GET /api/v2/trading-pairs-info/.
// Trade history: GET /api/v2/transactions/{pair}/?time=minute|hour|day: every trade of the last
// minute, hour or day, newest first, no paging: nothing older than 24 h can be had (ccxt 4.5.84
// bitstamp.js fetchTrades; https://www.bitstamp.net/api/#tag/Transactions-public). Its `date` is in
// whole seconds where the websocket gives microseconds. Trade ids are numbered across all pairs:
// a pair's ids skip, so gaps are found by time.
import { z } from 'zod';
import type { RawLevel } from '../orderBook.ts';
import { batches, catalogued, parseJson, unknown, type HistoryPage, type MarketListing, type TradeMessage, type VenueDescriptor, type VenueMessage } from '../venue.ts';

const levels = z.array(z.tuple([z.string(), z.string()]));
const envelope = z.object({ event: z.string(), channel: z.string().optional(), data: z.unknown() });
const trade = z
  .object({ id: z.number(), amount_str: z.string(), price_str: z.string(), type: z.union([z.literal(0), z.literal(1)]), microtimestamp: z.string().regex(/^\d+$/) })
  .loose();
const orderBook = z.object({ microtimestamp: z.string().regex(/^\d+$/), bids: levels, asks: levels }).loose();
const error = z.object({ message: z.string().optional(), code: z.unknown().optional() }).loose();
const pairs = z.array(z.object({ name: z.string(), url_symbol: z.string(), trading: z.string() }).loose());
/** The venue writes every field as a string; numbers are taken too. */
const digits = z.union([z.string().regex(/^\d+$/), z.number().int().nonnegative()]).transform(String);
const transactions = z.array(
  z.object({ date: digits, tid: digits, amount: z.string(), price: z.string(), type: z.union([z.literal('0'), z.literal('1'), z.literal(0), z.literal(1)]) }).loose(),
);

const tradesChannel = 'live_trades_';
const bookChannel = 'order_book_';

/** Microseconds since the epoch, as Bitstamp writes them, to milliseconds. */
const millis = (micros: string) => Math.floor(Number(micros) / 1_000);
const toRaw = (raw: z.infer<typeof levels>): RawLevel[] => raw.map(([p, q]) => [p, q]);

/** Pairs open for trading; `url_symbol` (btcusd) is how channels name them, `name` (BTC/USD) gives base and quote. */
export function parsePairs(json: unknown): MarketListing[] {
  return pairs
    .parse(json)
    .filter((p) => p.trading === 'Enabled')
    .flatMap((p) => {
      const [base, quote] = p.name.split('/');
      return base && quote ? [{ symbol: p.url_symbol, base, quote, contractSize: '1' }] : [];
    });
}

export function parseBitstamp(text: string): VenueMessage[] {
  const e = envelope.safeParse(parseJson(text));
  if (!e.success) return unknown;
  const { event, channel = '', data } = e.data;
  switch (event) {
    case 'trade': {
      const t = trade.safeParse(data);
      if (!t.success || !channel.startsWith(tradesChannel)) return unknown;
      // `type` is the taker's side: 0 buy, 1 sell. The *_str fields keep the venue's decimals.
      const d = t.data;
      return [
        { kind: 'trade', symbol: channel.slice(tradesChannel.length), tradeId: String(d.id), price: d.price_str, quantity: d.amount_str, side: d.type === 0 ? 'buy' : 'sell', ts: millis(d.microtimestamp) },
      ];
    }
    case 'data': {
      const b = orderBook.safeParse(data);
      if (!b.success || !channel.startsWith(bookChannel)) return unknown;
      return [{ kind: 'book', symbol: channel.slice(bookChannel.length), snapshot: true, bids: toRaw(b.data.bids), asks: toRaw(b.data.asks), ts: millis(b.data.microtimestamp) }];
    }
    case 'bts:subscription_succeeded':
    case 'bts:unsubscription_succeeded':
      return [{ kind: 'control', what: 'ack' }];
    // The answer to our heartbeat.
    case 'bts:heartbeat':
      return [{ kind: 'control', what: 'pong' }];
    // Sent before maintenance: reconnect now, to another server.
    case 'bts:request_reconnect':
      return [{ kind: 'control', what: 'reconnect', detail: 'bts:request_reconnect' }];
    case 'bts:error': {
      const err = error.safeParse(data);
      return [{ kind: 'control', what: 'error', detail: err.success ? (err.data.message ?? 'error') : 'error' }];
    }
    default:
      return unknown;
  }
}

/** How far back `transactions?time=day` reaches, the longest window the venue serves. */
const transactionsReachMs = 86_400_000;

/**
 * One transactions answer: every trade of the window, in one page (`more` false). `type` is the
 * taker's side, as on the websocket; `date` is whole seconds, so the time is that second's start.
 */
export function parseTransactions(json: unknown, symbol: string): HistoryPage | undefined {
  const rows = transactions.safeParse(json);
  if (!rows.success) return undefined;
  const trades = rows.data.map(
    (t): TradeMessage => ({ kind: 'trade', symbol, tradeId: t.tid, price: t.price, quantity: t.amount, side: String(t.type) === '0' ? 'buy' : 'sell', ts: Number(t.date) * 1_000 }),
  );
  return { trades, more: false };
}

/** Channels per connection: the venue closes a connection that subscribes a 1,025th. */
const channelsPerSocket = 1_000;

export const bitstamp: VenueDescriptor = {
  ...catalogued('bitstamp'),
  docs: 'https://www.bitstamp.net/websocket/v2/',
  endpoints: { ws: 'wss://ws.bitstamp.net', rest: 'https://www.bitstamp.net' },
  channels: ['trades', 'books'],
  quotes: ['USD', 'USDT', 'USDC'],
  listMarkets: async (io, endpoints) => parsePairs(await io.getJson(`${endpoints.rest}/api/v2/trading-pairs-info/`)),
  sockets: (endpoints, markets) =>
    batches(markets, channelsPerSocket / 2).map((group) => ({
      url: endpoints.ws,
      symbols: group.map((m) => m.symbol),
      // One channel per subscribe message: the venue takes no lists.
      subscribe: group.flatMap((m) => [tradesChannel, bookChannel].map((prefix) => JSON.stringify({ event: 'bts:subscribe', data: { channel: `${prefix}${m.symbol}` } }))),
    })),
  // The venue answers each heartbeat; a quiet pair sends nothing else.
  keepAlive: { pingEveryMs: 15_000, message: JSON.stringify({ event: 'bts:heartbeat' }), staleAfterMs: 45_000 },
  // No published limit on client messages; one subscribe per channel makes start-up send many.
  sendsPerSecond: 20,
  parse: parseBitstamp,
  // Every book message is the whole top 100: nothing to chain, and a lost message is healed by the next.
  book: { depth: 100 },
  history: {
    continuity: 'time',
    // Exchange-wide integer ids rise with time; the REST time is to the second: a recovery places trades by id.
    idsRise: true,
    rest: {
      reachMs: transactionsReachMs,
      // 400 requests a second and 10,000 in 10 minutes per client (Bitstamp's API page as quoted by
      // api-evangelist/bitstamp rate-limits.yml; older copies say 8,000): one request recovers a gap.
      requestsPerSecond: 5,
      // Its `date` is in whole seconds (the websocket gives microseconds).
      timeResolutionMs: 1_000,
      // Always the whole day: `url` has no clock to pick the shortest window that covers the cursor.
      url: (restBase, symbol) => `${restBase}/api/v2/transactions/${encodeURIComponent(symbol)}/?time=day`,
      parse: parseTransactions,
    },
  },
};
