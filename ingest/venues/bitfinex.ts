// Bitfinex websocket v2 public channels: https://docs.bitfinex.com/docs/ws-public
// Channels: trades, book (P0 price levels; with the OB_CHECKSUM flag the venue sends a CRC32 of the
// top 25 levels after each change: https://docs.bitfinex.com/docs/ws-websocket-checksum), status
// key liq:global (every liquidation: https://docs.bitfinex.com/reference/ws-public-status).
// Data frames name a channel by the number the connection gave it when it subscribed (chanId), so
// each connection has a session that remembers them. Pairs: GET /v2/conf/pub:list:pair:{exchange,futures}.
// Trade history: GET /v2/trades/{symbol}/hist?start&limit&sort=1, the whole history, rows
// [ID, MTS, AMOUNT, PRICE] as on the websocket, MTS >= start, at most 10,000 a page, 15 requests a
// minute (https://docs.bitfinex.com/reference/rest-public-trades). Ids are the venue's across all
// pairs (a pair's skip), so gaps are found by time.
import { crc32 } from 'node:zlib';
import { z } from 'zod';
import type { OrderBook, RawLevel } from '../orderBook.ts';
import {
  batches,
  catalogued,
  parseJson,
  unknown,
  withBaseNames,
  type HistoryPage,
  type MarketListing,
  type TradeMessage,
  type VenueDescriptor,
  type VenueEndpoints,
  type VenueIo,
  type VenueMarket,
  type VenueMessage,
  type VenueSession,
} from '../venue.ts';

/** conf flag: a checksum message after every book change. */
const OB_CHECKSUM = 131_072;
/** Levels per side we subscribe to (the venue offers 1, 25, 100, 250); the checksum covers the top 25. */
const bookLength = 100;

const subscribed = z.discriminatedUnion('channel', [
  z.object({ event: z.literal('subscribed'), channel: z.literal('trades'), chanId: z.number(), symbol: z.string() }).loose(),
  z.object({ event: z.literal('subscribed'), channel: z.literal('book'), chanId: z.number(), symbol: z.string() }).loose(),
  z.object({ event: z.literal('subscribed'), channel: z.literal('status'), chanId: z.number(), key: z.string() }).loose(),
]);
const event = z.object({ event: z.string(), code: z.number().optional(), msg: z.string().optional(), chanId: z.number().optional() }).loose();
/** [ID, MTS, AMOUNT, PRICE]: AMOUNT is signed by the taker's side. */
const tradeRow = z.tuple([z.number(), z.number(), z.number(), z.number()]).rest(z.unknown());
/** [PRICE, COUNT, AMOUNT]: AMOUNT > 0 is a bid, < 0 an ask; COUNT 0 removes the level. */
const bookRow = z.tuple([z.number(), z.number(), z.number()]);
// Made once: schemas made per message showed in the collectors' thread's profile (test/bench/RESULTS.md).
const bookRows = z.array(bookRow);
const tradeRows = z.array(tradeRow);
const liquidationRows = z.array(z.unknown());
/** ["pos", POS_ID, MTS, _, SYMBOL, AMOUNT, BASE_PRICE, _, IS_MATCH, IS_MARKET_SOLD, _, PRICE_ACQUIRED]; PRICE_ACQUIRED is null on a trigger sent before its match. */
const liquidationRow = z.tuple([z.literal('pos'), z.number(), z.number(), z.unknown(), z.string(), z.number(), z.number(), z.unknown(), z.number(), z.unknown(), z.unknown(), z.number().nullable()]).rest(z.unknown());
const pairList = z.tuple([z.array(z.string())]).rest(z.unknown());

/** Bitfinex's own tickers for the dollar stablecoins (UST is Tether's USDT). */
const currencyAliases: Record<string, string> = { UST: 'USDT', UDC: 'USDC' };
const normalizedQuote = (quote: string) => currencyAliases[quote] ?? quote;

/**
 * Pairs from the exchange (spot) or futures list. Pairs of two three-letter tickers are written
 * together (BTCUSD); longer tickers take a colon (DOGE:USD); perpetuals end both sides in F0
 * (BTCF0:USTF0). The quote is published under its common ticker (USDT, not UST).
 */
export function parsePairList(json: unknown, kind: 'exchange' | 'futures'): MarketListing[] {
  const [pairs] = pairList.parse(json);
  return pairs.flatMap((pair) => {
    let [base, quote] = pair.includes(':') ? pair.split(':') : [pair.slice(0, 3), pair.slice(3)];
    if (!base || !quote) return [];
    if (kind === 'futures') {
      if (!base.endsWith('F0') || !quote.endsWith('F0')) return [];
      [base, quote] = [base.slice(0, -2), quote.slice(0, -2)];
    }
    return [{ symbol: `t${pair}`, base, quote: normalizedQuote(quote), contractSize: '1' }];
  });
}

/** Numbers as JavaScript writes them: what the venue's checksum is computed over, and exact for the doubles JSON gives. */
const text = (n: number) => String(n);

/**
 * Bitfinex's checksum of a P0 book: the top 25 bids and asks interleaved (bid, ask, bid, ask...;
 * a side that runs out leaves the other to continue), each as price:amount with ask amounts
 * negative, joined with ':' and hashed with CRC32 as a signed 32-bit integer.
 */
export function bitfinexChecksum(book: OrderBook): number {
  const bids = book.topRaw('bid', 25);
  const asks = book.topRaw('ask', 25);
  const parts: string[] = [];
  for (let i = 0; i < 25; i++) {
    const bid = bids[i];
    const ask = asks[i];
    if (bid) parts.push(bid[0], bid[1]);
    if (ask) parts.push(ask[0], `-${ask[1]}`);
  }
  return crc32(parts.join(':')) | 0;
}

type ChannelInfo = { channel: 'trades' | 'book'; symbol: string } | { channel: 'liquidations' };

/** A trade row, on the websocket and in the REST history alike: AMOUNT signed by the taker's side, in base units. */
function tradeOf(symbol: string, [id, mts, amount, price]: z.infer<typeof tradeRow>): TradeMessage {
  return { kind: 'trade', symbol, tradeId: String(id), price: text(price), quantity: text(Math.abs(amount)), side: amount > 0 ? 'buy' : 'sell', ts: mts };
}

/** The most rows trades/hist gives per request (its `limit` maximum). */
export const tradesPageSize = 10_000;

/** One trades/hist page (oldest first with sort=1); a full page means the venue holds more after it. Undefined for an error (["error", code, text]). */
export function parseTradesHistory(json: unknown, symbol: string): HistoryPage | undefined {
  const rows = tradeRows.safeParse(json);
  if (!rows.success) return undefined;
  return { trades: rows.data.map((row) => tradeOf(symbol, row)), more: rows.data.length >= tradesPageSize };
}

/** A level as our book keeps it: side by the sign of AMOUNT, COUNT 0 as quantity 0. */
function toLevel([price, count, amount]: z.infer<typeof bookRow>): { side: 'bid' | 'ask'; level: RawLevel } {
  return { side: amount > 0 ? 'bid' : 'ask', level: [text(price), count === 0 ? '0' : text(Math.abs(amount))] };
}

const rowAsList = <T>(row: T | undefined): T[] | undefined => (row === undefined ? undefined : [row]);

function parseBook(symbol: string, payload: unknown): VenueMessage[] {
  // A snapshot is a list of rows (none for an empty book), an update one row: told apart by shape,
  // so that each message is read once (an update read as a list first failed, at a cost, every time).
  const snapshot = Array.isArray(payload) && (payload.length === 0 || Array.isArray(payload[0]));
  const rows = snapshot ? bookRows.safeParse(payload).data : rowAsList(bookRow.safeParse(payload).data);
  if (!rows) return unknown;
  const bids: RawLevel[] = [];
  const asks: RawLevel[] = [];
  for (const r of rows) {
    const { side, level } = toLevel(r);
    (side === 'bid' ? bids : asks).push(level);
  }
  return [{ kind: 'book', symbol, snapshot, bids, asks }];
}

function parseLiquidations(payload: unknown): VenueMessage[] {
  const rows = liquidationRows.safeParse(payload);
  if (!rows.success) return unknown;
  const out: VenueMessage[] = [];
  for (const raw of rows.data) {
    const r = liquidationRow.safeParse(raw);
    if (!r.success) return unknown;
    const [, positionId, mts, , symbol, amount, basePrice, , isMatch, , , priceAcquired] = r.data;
    // IS_MATCH 0 is the liquidation itself (the whole position); 1 marks the market executions of
    // parts of it, which may arrive before or after it.
    if (isMatch !== 0) continue;
    out.push({
      kind: 'liquidation',
      symbol,
      liquidationId: String(positionId),
      // The price at which the position was taken over (Bitfinex publishes no fill price); a trigger
      // sent before its match has none yet, and carries only the position's BASE_PRICE.
      price: text(priceAcquired ?? basePrice),
      quantity: text(Math.abs(amount)),
      // AMOUNT is the position: positive a long, negative a short.
      positionSide: amount > 0 ? 'long' : 'short',
      ts: Math.floor(mts),
    });
  }
  return out;
}

/** Frames that mean the same on any connection: the events. */
function parseEvent(json: Record<string, unknown>): VenueMessage[] {
  const e = event.safeParse(json);
  if (!e.success) return unknown;
  switch (e.data.event) {
    case 'info':
      // 20051: "Stop/Restart Websocket Server (please reconnect)".
      if (e.data.code === 20051) return [{ kind: 'control', what: 'reconnect', detail: `20051: ${e.data.msg ?? ''}` }];
      return [{ kind: 'control', what: 'status', detail: e.data.code === undefined ? 'info' : `${e.data.code}: ${e.data.msg ?? ''}` }];
    case 'conf':
    case 'subscribed':
    case 'unsubscribed':
      return [{ kind: 'control', what: 'ack' }];
    case 'pong':
      return [{ kind: 'control', what: 'pong' }];
    case 'error':
      return [{ kind: 'control', what: 'error', detail: `${e.data.code ?? ''}: ${e.data.msg ?? ''}` }];
    default:
      return unknown;
  }
}

const bookSubscribe = (symbol: string) => JSON.stringify({ event: 'subscribe', channel: 'book', symbol, prec: 'P0', freq: 'F0', len: String(bookLength) });

/** One connection's view of its channels. */
export function bitfinexSession(): VenueSession {
  const channels = new Map<number, ChannelInfo>();
  return {
    parse(frame) {
      const json = parseJson(frame);
      if (typeof json !== 'object' || json === null) return unknown;
      if (!Array.isArray(json)) {
        const s = subscribed.safeParse(json);
        if (s.success) {
          const d = s.data;
          if (d.channel === 'status') {
            if (d.key === 'liq:global') channels.set(d.chanId, { channel: 'liquidations' });
          } else channels.set(d.chanId, { channel: d.channel, symbol: d.symbol });
        } else if ((json as { event?: unknown }).event === 'unsubscribed') {
          const chanId = (json as { chanId?: unknown }).chanId;
          if (typeof chanId === 'number') channels.delete(chanId);
        }
        return parseEvent(json as Record<string, unknown>);
      }
      const [chanId, first, second] = json as unknown[];
      // A heartbeat needs no channel: the venue may send one on a channel number before confirming its subscription.
      if (typeof chanId === 'number' && first === 'hb') return [{ kind: 'control', what: 'heartbeat' }];
      const info = typeof chanId === 'number' ? channels.get(chanId) : undefined;
      if (!info) return unknown;
      if (info.channel === 'liquidations') return parseLiquidations(first);
      if (info.channel === 'book') {
        if (first === 'cs') return typeof second === 'number' ? [{ kind: 'book', symbol: info.symbol, snapshot: false, bids: [], asks: [], checksum: second }] : unknown;
        return parseBook(info.symbol, first);
      }
      // Trades: the subscription starts with recent trades (already counted when they happened);
      // "te" is a trade as it executes, "tu" the same trade again once recorded.
      if (first === 'tu') return [];
      if (first !== 'te') return Array.isArray(first) ? [{ kind: 'control', what: 'status', detail: 'trade snapshot' }] : unknown;
      const t = tradeRow.safeParse(second);
      if (!t.success) return unknown;
      return [tradeOf(info.symbol, t.data)];
    },
    // Bitfinex unsubscribes by channel number; subscribing again brings a new snapshot.
    resubscribe(symbols) {
      const wanted = new Set(symbols);
      const out: string[] = [];
      for (const [chanId, info] of channels) if (info.channel === 'book' && wanted.has(info.symbol)) out.push(JSON.stringify({ event: 'unsubscribe', chanId }));
      return [...out, ...symbols.map(bookSubscribe)];
    },
  };
}

/**
 * A frame alone: events mean something, channel data does not (its channel number is only known to
 * the connection that subscribed). The collector parses with `bitfinexSession()`.
 */
const parseBitfinex = (frame: string) => bitfinexSession().parse(frame);

/** A connection may hold 25 channel subscriptions: 12 markets of two channels, and the liquidation feed on the first. */
const marketsPerSocket = 12;

function bitfinexSockets(endpoints: VenueEndpoints, markets: readonly VenueMarket[], liquidations: boolean) {
  return batches(markets, marketsPerSocket).map((group, i) => ({
    url: `${endpoints.ws}/ws/2`,
    symbols: group.map((m) => m.symbol),
    subscribe: [
      // Book checksums are asked for before any book is subscribed.
      JSON.stringify({ event: 'conf', flags: OB_CHECKSUM }),
      ...group.flatMap((m) => [JSON.stringify({ event: 'subscribe', channel: 'trades', symbol: m.symbol }), bookSubscribe(m.symbol)]),
      ...(liquidations && i === 0 ? [JSON.stringify({ event: 'subscribe', channel: 'status', key: 'liq:global' })] : []),
    ],
  }));
}

/** [[[code, full name], ...]]: GET /v2/conf/pub:map:currency:label. */
const currencyLabels = z.tuple([z.array(z.tuple([z.string(), z.string()]))]).rest(z.unknown());

/** Full name by currency code, from the label map. */
export function parseCurrencyLabels(json: unknown): Map<string, string> {
  return new Map(currencyLabels.parse(json)[0]);
}

const listPairs = (kind: 'exchange' | 'futures') => (io: VenueIo, endpoints: VenueEndpoints) =>
  withBaseNames(
    io.getJson(`${endpoints.rest}/v2/conf/pub:list:pair:${kind}`).then((json) => parsePairList(json, kind)),
    async () => parseCurrencyLabels(await io.getJson(`${endpoints.rest}/v2/conf/pub:map:currency:label`)),
  );

const shared = {
  docs: 'https://docs.bitfinex.com/docs/ws-public',
  endpoints: { ws: 'wss://api-pub.bitfinex.com', rest: 'https://api-pub.bitfinex.com' },
  // Each channel sends a heartbeat after 15 s of silence; our pings are answered with pongs.
  keepAlive: { pingEveryMs: 15_000, message: JSON.stringify({ event: 'ping', cid: 1 }), staleAfterMs: 45_000 },
  // The published limits are on connections (20 a minute), not on messages; start-up sends one per channel.
  sendsPerSecond: 20,
  // 20 new connections a minute per address (docs.bitfinex.com/docs/ws-general, as research/venues.md
  // gives it), spot and derivatives on the same servers.
  connectLimit: { connections: 20, windowMs: 60_000, scope: 'bitfinex' },
  parse: parseBitfinex,
  session: bitfinexSession,
  book: { checksum: bitfinexChecksum, depth: bookLength },
  history: {
    continuity: 'time',
    // Integer trade ids rise with time (not consecutive per pair): a recovery places trades by id.
    idsRise: true,
    rest: {
      // 15 requests a minute (the endpoint's page); past it the IP is refused for 60 s.
      requestsPerSecond: 0.2,
      // Paged on the millisecond: trades that share the cursor's come again and are dropped as at or before it.
      url: (restBase, symbol, after) => `${restBase}/v2/trades/${encodeURIComponent(symbol)}/hist?start=${after.ts}&limit=${tradesPageSize}&sort=1`,
      parse: parseTradesHistory,
    },
  },
} satisfies Partial<VenueDescriptor>;

export const bitfinex: VenueDescriptor = {
  ...catalogued('bitfinex'),
  ...shared,
  channels: ['trades', 'books'],
  quotes: ['USD', 'USDT', 'USDC'],
  listMarkets: listPairs('exchange'),
  sockets: (endpoints, markets) => bitfinexSockets(endpoints, markets, false),
};

export const bitfinexDerivatives: VenueDescriptor = {
  ...catalogued('bitfinex-derivatives'),
  ...shared,
  channels: ['trades', 'books', 'liquidations'],
  liquidations: { sampled: false, rule: 'status liq:global: every liquidation, as it is triggered' },
  quotes: ['USDT'],
  listMarkets: listPairs('futures'),
  sockets: (endpoints, markets) => bitfinexSockets(endpoints, markets, true),
};
