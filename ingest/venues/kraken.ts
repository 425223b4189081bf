// Kraken spot websocket v2: https://docs.kraken.com/api/docs/websocket-v2/book
// Channels: trade, book (snapshot + updates, CRC32 checksum of the top 10 levels with prices and
// quantities formatted at the pair's precision: https://docs.kraken.com/api/docs/guides/spot-ws-book-v2),
// instrument (pairs and their precisions), heartbeat. Prices and quantities arrive as JSON numbers.
// Trade history: REST GET /0/public/Trades (https://docs.kraken.com/api/docs/rest-api/get-recent-trades).
import { crc32 } from 'node:zlib';
import { z } from 'zod';
import type { OrderBook, RawLevel } from '../orderBook.ts';
import { batches, catalogued, integerTradeNumber, parseJson, unknown } from '../venue.ts';
import type { HistoryCursor, HistoryPage, MarketListing, TradeHistoryRule, TradeMessage, VenueDescriptor, VenueMarket, VenueMessage } from '../venue.ts';

const level = z.object({ price: z.number(), qty: z.number() });
const trade = z.object({
  type: z.enum(['snapshot', 'update']),
  data: z.array(z.object({ symbol: z.string(), side: z.enum(['buy', 'sell']), price: z.number(), qty: z.number(), trade_id: z.number(), timestamp: z.string() }).loose()),
});
const book = z.object({
  type: z.enum(['snapshot', 'update']),
  data: z.array(z.object({ symbol: z.string(), bids: z.array(level), asks: z.array(level), checksum: z.number(), timestamp: z.string().optional() }).loose()),
});
/** A REST trade row: price, volume, time (s), side b/s, order type, misc, trade id. */
const restTrade = z.tuple([z.string(), z.string(), z.number(), z.enum(['b', 's']), z.string(), z.string(), z.number()]).rest(z.unknown());
const restTrades = z.object({ error: z.array(z.string()).length(0), result: z.record(z.string(), z.unknown()) });
const reply = z.object({ method: z.string(), success: z.boolean().optional(), error: z.string().optional() }).loose();
const instrument = z.object({
  channel: z.literal('instrument'),
  type: z.literal('snapshot'),
  data: z.object({
    pairs: z.array(z.object({ symbol: z.string(), base: z.string(), quote: z.string(), status: z.string(), price_precision: z.number(), qty_precision: z.number() }).loose()),
  }),
});

/** JSON numbers back to decimal text: exact for the 15-17 significant digits a double holds. */
const toRaw = (levels: z.infer<typeof level>[]): RawLevel[] => levels.map((l) => [String(l.price), String(l.qty)]);

/** Online pairs with the precisions the checksum needs, from the `instrument` channel's snapshot. */
export function parseInstrumentSnapshot(json: unknown): MarketListing[] | undefined {
  const snapshot = instrument.safeParse(json);
  if (!snapshot.success) return undefined;
  return snapshot.data.data.pairs
    .filter((p) => p.status === 'online')
    .map((p) => ({ symbol: p.symbol, base: p.base, quote: p.quote, contractSize: '1', priceDecimals: p.price_precision, qtyDecimals: p.qty_precision }));
}

/** A level value as the checksum wants it: at the pair's precision, without the point and leading zeros. */
const checksumText = (value: string, decimals: number) => Number(value).toFixed(decimals).replace('.', '').replace(/^0+/, '');

/** Kraken's book checksum: top 10 asks (low to high), then top 10 bids (high to low), price then quantity; CRC32, unsigned. */
export function krakenChecksum(book: OrderBook, market: Pick<VenueMarket, 'priceDecimals' | 'qtyDecimals'>): number {
  const text = (levels: RawLevel[]) => levels.map(([p, q]) => checksumText(p, market.priceDecimals ?? 0) + checksumText(q, market.qtyDecimals ?? 0)).join('');
  return crc32(text(book.topRaw('ask', 10)) + text(book.topRaw('bid', 10))) >>> 0;
}

export function parseKraken(text: string): VenueMessage[] {
  const json = parseJson(text) as Record<string, unknown> | undefined;
  if (typeof json !== 'object' || json === null) return unknown;
  switch (json.channel) {
    case 'heartbeat':
      return [{ kind: 'control', what: 'heartbeat' }];
    case 'status':
      return [{ kind: 'control', what: 'status', detail: JSON.stringify(json.data ?? null) }];
    case 'trade': {
      const t = trade.safeParse(json);
      if (!t.success) return unknown;
      // The subscription's first message replays recent trades; we ask for none, and skip it if it comes.
      if (t.data.type === 'snapshot') return [{ kind: 'control', what: 'status', detail: 'trade snapshot' }];
      // `side` is the taker's. `trade_id` numbers the book's trades consecutively ("Sequential int").
      return t.data.data.map((d) => ({
        kind: 'trade', symbol: d.symbol, tradeId: String(d.trade_id), seq: d.trade_id, price: String(d.price), quantity: String(d.qty), side: d.side, ts: Date.parse(d.timestamp),
      }));
    }
    case 'book': {
      const b = book.safeParse(json);
      if (!b.success) return unknown;
      return b.data.data.map((d) => ({
        kind: 'book',
        symbol: d.symbol,
        snapshot: b.data.type === 'snapshot',
        bids: toRaw(d.bids),
        asks: toRaw(d.asks),
        checksum: d.checksum,
        // Snapshots carry no time: the collector uses the receive time.
        ...(d.timestamp ? { ts: Date.parse(d.timestamp) } : {}),
      }));
    }
    case 'instrument':
      return [{ kind: 'control', what: 'status', detail: 'instrument' }];
  }
  const r = reply.safeParse(json);
  if (!r.success) return unknown;
  if (r.data.method === 'pong') return [{ kind: 'control', what: 'pong' }];
  if (r.data.success === false) return [{ kind: 'control', what: 'error', detail: `${r.data.method}: ${r.data.error ?? ''}` }];
  return [{ kind: 'control', what: 'ack' }];
}

/** Levels per side we subscribe to; the checksum covers the top 10 whatever the depth. */
const depth = 100;
const symbolsPerMessage = 50;

const channelMessages = (method: 'subscribe' | 'unsubscribe', params: Record<string, unknown>, symbols: readonly string[]) =>
  batches(symbols, symbolsPerMessage).map((symbol, i) => JSON.stringify({ method, params: { ...params, symbol }, req_id: i + 1 }));

/** Trades a page holds: the most the endpoint serves (its default). */
const historyPageSize = 1_000;
/**
 * REST pair names keep Kraken's legacy asset codes where websocket v2 uses ISO ones: BTC/USD is
 * XBTUSD, DOGE/USD XDGUSD (AssetPairs `altname`); other codes are the same on both.
 */
const legacyCodes: Record<string, string> = { BTC: 'XBT', DOGE: 'XDG' };
export const krakenRestPair = (symbol: string) => symbol.split('/').map((code) => legacyCodes[code] ?? code).join('');

/**
 * Trades after a time, oldest first: `since` in nanoseconds, exclusive. Asked from just before the
 * cursor's millisecond, the page brings back the cursor (and trades of its millisecond before it,
 * dropped by number) and skips none after it, whatever the sub-millisecond times.
 */
function recentTradesUrl(rest: string, symbol: string, after: HistoryCursor): string {
  const since = BigInt(after.ts) * 1_000_000n - 1n;
  return `${rest}/0/public/Trades?pair=${encodeURIComponent(krakenRestPair(symbol))}&since=${since}&count=${historyPageSize}`;
}

/** REST seconds with a fraction to whole milliseconds, as the websocket's ISO time gives them (floored). */
const restMillis = (seconds: number) => Math.floor(Math.round(seconds * 1e6) / 1_000);

/**
 * One page: the result's one pair key holds the rows (keyed by Kraken's own pair id, XXBTZUSD), beside
 * `last`. An answer with errors (a refusal: "EGeneral:Too many requests") is not a page.
 */
export function parseRecentTrades(json: unknown, symbol: string): HistoryPage | undefined {
  const page = restTrades.safeParse(json);
  if (!page.success) return undefined;
  const [key, ...others] = Object.keys(page.data.result).filter((k) => k !== 'last');
  if (key === undefined || others.length > 0) return undefined;
  const rows = z.array(restTrade).safeParse(page.data.result[key]);
  if (!rows.success) return undefined;
  return {
    trades: rows.data.map(([price, volume, time, side, , , id]): TradeMessage => ({
      kind: 'trade', symbol, tradeId: String(id), seq: id, price, quantity: volume, side: side === 'b' ? 'buy' : 'sell', ts: restMillis(time),
    })),
    more: rows.data.length >= historyPageSize,
  };
}

const history: TradeHistoryRule = {
  // v2 `trade_id`: "Sequential int" per book (websocket v1/v2 table); the docs' trade snapshot runs 4665846, 4665847.
  continuity: 'sequential',
  // The stored trade id is the trade's number: a restart's recovery starts from it.
  seqOf: integerTradeNumber,
  rest: {
    // "possible to retrieve the entire trading history" with `since` (Kraken support 218198197): no reach.
    // Public calls: a live probe was throttled after ~30 rapid calls and held 1 a second (third-party,
    // 2026-07); under it with room for a request that arrives late.
    requestsPerSecond: 0.8,
    url: recentTradesUrl,
    parse: parseRecentTrades,
  },
};

export const kraken: VenueDescriptor = {
  ...catalogued('kraken'),
  docs: 'https://docs.kraken.com/api/docs/websocket-v2/book',
  endpoints: { ws: 'wss://ws.kraken.com', rest: 'https://api.kraken.com' },
  channels: ['trades', 'books'],
  quotes: ['USD', 'USDT', 'USDC'],
  // The v2 symbols (BTC/USD) and the precisions the checksum needs both come from the instrument channel.
  listMarkets: (io, endpoints) =>
    io.wsRequest(`${endpoints.ws}/v2`, [JSON.stringify({ method: 'subscribe', params: { channel: 'instrument', snapshot: true }, req_id: 1 })], parseInstrumentSnapshot),
  sockets: (endpoints, markets) => {
    const symbols = markets.map((m) => m.symbol);
    return [
      {
        url: `${endpoints.ws}/v2`,
        symbols,
        subscribe: [...channelMessages('subscribe', { channel: 'trade', snapshot: false }, symbols), ...channelMessages('subscribe', { channel: 'book', depth }, symbols)],
      },
    ];
  },
  // Heartbeats come every second while subscribed; our pings are answered with pongs.
  keepAlive: { pingEveryMs: 20_000, message: JSON.stringify({ method: 'ping' }), staleAfterMs: 30_000 },
  sendsPerSecond: 5,
  parse: parseKraken,
  book: {
    checksum: krakenChecksum,
    // Kraken keeps `depth` levels and sends no deletion for a level pushed out of them.
    depth,
    resubscribe: (symbols) => [...channelMessages('unsubscribe', { channel: 'book', depth }, symbols), ...channelMessages('subscribe', { channel: 'book', depth }, symbols)],
  },
  history,
};
