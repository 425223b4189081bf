// Kraken spot websocket v2: https://docs.kraken.com/api/docs/websocket-v2/book
// Channels: trade, book (snapshot + updates, CRC32 checksum of the top 10 levels with prices and
// quantities formatted at the pair's precision: https://docs.kraken.com/api/docs/guides/spot-ws-book-v2),
// instrument (pairs and their precisions), heartbeat. Prices and quantities arrive as JSON numbers.
import { crc32 } from 'node:zlib';
import { z } from 'zod';
import type { OrderBook, RawLevel } from '../orderBook.ts';
import { batches, catalogued, parseJson, unknown, type MarketListing, type VenueDescriptor, type VenueMarket, type VenueMessage } from '../venue.ts';

const level = z.object({ price: z.number(), qty: z.number() });
const trade = z.object({
  type: z.enum(['snapshot', 'update']),
  data: z.array(z.object({ symbol: z.string(), side: z.enum(['buy', 'sell']), price: z.number(), qty: z.number(), trade_id: z.number(), timestamp: z.string() }).loose()),
});
const book = z.object({
  type: z.enum(['snapshot', 'update']),
  data: z.array(z.object({ symbol: z.string(), bids: z.array(level), asks: z.array(level), checksum: z.number(), timestamp: z.string().optional() }).loose()),
});
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
      // `side` is the taker's.
      return t.data.data.map((d) => ({ kind: 'trade', symbol: d.symbol, tradeId: String(d.trade_id), price: String(d.price), quantity: String(d.qty), side: d.side, ts: Date.parse(d.timestamp) }));
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
};
