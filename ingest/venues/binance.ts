// Binance spot market streams: https://developers.binance.com/docs/binance-spot-api-docs/web-socket-streams
// Local book rules: same page, "How to manage a local order book correctly".
import { z } from 'zod';
import { assetIdForVenueTicker } from '../../infra/catalog/catalog.ts';
import type { Config } from '../../infra/config.ts';
import type { TradeEvent } from '../../infra/events.ts';
import { OrderBook, type Level } from '../orderBook.ts';

export const binance = {
  id: 'binance',
  docs: 'https://developers.binance.com/docs/binance-spot-api-docs/web-socket-streams',
  wsUrl: (config: Pick<Config, 'VENUE_BINANCE_WS_URL'>) => `${config.VENUE_BINANCE_WS_URL.replace(/\/$/, '')}/stream`,
  restUrl: (config: Pick<Config, 'VENUE_BINANCE_REST_URL'>) => config.VENUE_BINANCE_REST_URL.replace(/\/$/, ''),
  /** Quotes whose markets feed the USD index. */
  quotes: ['USDT', 'USDC', 'USD'],
  streams: (symbol: string) => [`${symbol.toLowerCase()}@trade`, `${symbol.toLowerCase()}@depth@100ms`],
  /** Binance caps one SUBSCRIBE at a few hundred streams and incoming messages at 5/s. */
  subscribeBatch: 200,
  /** The server pings every 20 s: a minute without data or ping is a dead socket. */
  staleAfterMs: 60_000,
  snapshotLimit: 1_000,
} as const;

export interface BinanceMarket {
  symbol: string;
  baseAsset: string;
  quoteAsset: string;
  /** Catalog id of the base asset. */
  asset: string;
}

const exchangeInfo = z.object({
  symbols: z.array(z.object({ symbol: z.string(), status: z.string(), baseAsset: z.string(), quoteAsset: z.string() }).loose()),
});

/** Markets to follow: trading, quoted in a USD currency, base asset in our catalog. Unmapped bases are listed, never guessed. */
export function parseExchangeInfo(json: unknown): { markets: BinanceMarket[]; unmapped: string[] } {
  const markets: BinanceMarket[] = [];
  const unmapped = new Set<string>();
  for (const s of exchangeInfo.parse(json).symbols) {
    if (s.status !== 'TRADING' || !(binance.quotes as readonly string[]).includes(s.quoteAsset)) continue;
    const asset = assetIdForVenueTicker(binance.id, s.baseAsset);
    if (asset) markets.push({ symbol: s.symbol, baseAsset: s.baseAsset, quoteAsset: s.quoteAsset, asset });
    else unmapped.add(s.baseAsset);
  }
  return { markets, unmapped: [...unmapped].sort() };
}

/** SUBSCRIBE requests for the given markets, in batches the venue accepts. */
export function subscribeMessages(markets: readonly BinanceMarket[]): string[] {
  const streams = markets.flatMap((m) => binance.streams(m.symbol));
  const out: string[] = [];
  for (let i = 0; i < streams.length; i += binance.subscribeBatch)
    out.push(JSON.stringify({ method: 'SUBSCRIBE', params: streams.slice(i, i + binance.subscribeBatch), id: out.length + 1 }));
  return out;
}

const levels = z.array(z.tuple([z.string(), z.string()]).rest(z.unknown()));
const tradeData = z.object({ e: z.literal('trade'), s: z.string(), t: z.number(), p: z.string(), q: z.string(), T: z.number(), m: z.boolean() }).loose();
const depthData = z.object({ e: z.literal('depthUpdate'), E: z.number(), s: z.string(), U: z.number(), u: z.number(), b: levels, a: levels }).loose();
const combined = z.object({ stream: z.string(), data: z.unknown() });
const ack = z.object({ result: z.null(), id: z.union([z.number(), z.string()]) });
export const depthSnapshot = z.object({ lastUpdateId: z.number(), bids: levels, asks: levels }).loose();

export interface DepthDiff {
  symbol: string;
  firstUpdateId: number;
  finalUpdateId: number;
  eventTime: number;
  bids: Level[];
  asks: Level[];
}

export interface DepthSnapshot {
  lastUpdateId: number;
  bids: Level[];
  asks: Level[];
}

export type BinanceMessage =
  | { kind: 'trade'; symbol: string; tradeId: string; price: number; quantity: number; side: 'buy' | 'sell'; ts: number }
  | { kind: 'depth'; diff: DepthDiff }
  | { kind: 'ack' }
  | { kind: 'unknown' };

const toLevels = (raw: z.infer<typeof levels>): Level[] => raw.map(([p, q]) => [Number(p), Number(q)]);

export function toSnapshot(json: unknown): DepthSnapshot {
  const s = depthSnapshot.parse(json);
  return { lastUpdateId: s.lastUpdateId, bids: toLevels(s.bids), asks: toLevels(s.asks) };
}

/** Pure: one websocket text frame to what it means. Never throws. */
export function parseMessage(text: string): BinanceMessage {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return { kind: 'unknown' };
  }
  if (ack.safeParse(json).success) return { kind: 'ack' };
  const envelope = combined.safeParse(json);
  const data = envelope.success ? envelope.data.data : json;
  const trade = tradeData.safeParse(data);
  if (trade.success) {
    const t = trade.data;
    // m = the buyer was the maker, so the taker sold.
    return { kind: 'trade', symbol: t.s, tradeId: String(t.t), price: Number(t.p), quantity: Number(t.q), side: t.m ? 'sell' : 'buy', ts: t.T };
  }
  const depth = depthData.safeParse(data);
  if (depth.success) {
    const d = depth.data;
    return { kind: 'depth', diff: { symbol: d.s, firstUpdateId: d.U, finalUpdateId: d.u, eventTime: d.E, bids: toLevels(d.b), asks: toLevels(d.a) } };
  }
  return { kind: 'unknown' };
}

export function toTradeEvent(m: Extract<BinanceMessage, { kind: 'trade' }>, market: BinanceMarket, receivedAt: number): TradeEvent {
  return {
    type: 'trade',
    venue: binance.id,
    market: market.symbol,
    asset: market.asset,
    quote: market.quoteAsset,
    tradeId: m.tradeId,
    price: m.price,
    quantity: m.quantity,
    side: m.side,
    ts: m.ts,
    receivedAt,
  };
}

/** Diffs buffered while a snapshot is fetched; more means the snapshot is hopelessly behind. */
const maxBuffered = 5_000;

/**
 * A market's local book kept in sync by Binance's rules: buffer diffs, take a REST snapshot,
 * drop diffs it already contains, then every diff must continue the previous one; a gap
 * discards the book and starts over.
 */
export class BinanceBookSync {
  readonly book = new OrderBook();
  #buffer: DepthDiff[] = [];
  #lastUpdateId = -1;
  #synced = false;
  #awaitingFirst = false;
  /** Times the book was discarded because the diff stream had a gap. */
  resyncs = 0;

  get synced(): boolean {
    return this.#synced;
  }

  /** A snapshot is worth fetching: diffs are being buffered and the book is not live. */
  get wantsSnapshot(): boolean {
    return !this.#synced && this.#buffer.length > 0;
  }

  onDiff(diff: DepthDiff): 'buffered' | 'applied' | 'stale' | 'gap' {
    if (!this.#synced) {
      if (this.#buffer.length >= maxBuffered) this.#buffer = [];
      this.#buffer.push(diff);
      return 'buffered';
    }
    return this.#apply(diff);
  }

  /** 'refetch' when the snapshot is older than the first buffered diff. */
  onSnapshot(snapshot: DepthSnapshot): 'synced' | 'refetch' | 'gap' {
    const first = this.#buffer[0];
    if (!first || snapshot.lastUpdateId < first.firstUpdateId) return 'refetch';
    this.book.clear();
    for (const [p, q] of snapshot.bids) this.book.set('bid', p, q);
    for (const [p, q] of snapshot.asks) this.book.set('ask', p, q);
    this.#lastUpdateId = snapshot.lastUpdateId;
    this.#synced = true;
    this.#awaitingFirst = true;
    const buffered = this.#buffer;
    this.#buffer = [];
    for (const diff of buffered) if (this.#apply(diff) === 'gap') return 'gap';
    return 'synced';
  }

  /** Forget everything, e.g. after a reconnect. */
  reset(): void {
    this.book.clear();
    this.#buffer = [];
    this.#synced = false;
    this.#lastUpdateId = -1;
  }

  #apply(diff: DepthDiff): 'applied' | 'stale' | 'gap' {
    if (diff.finalUpdateId <= this.#lastUpdateId) return 'stale';
    const next = this.#lastUpdateId + 1;
    const continues = this.#awaitingFirst
      ? diff.firstUpdateId <= next && next <= diff.finalUpdateId
      : diff.firstUpdateId === next;
    if (!continues) {
      this.resyncs += 1;
      this.reset();
      // The diff that showed the gap starts the next buffer.
      this.#buffer.push(diff);
      return 'gap';
    }
    for (const [p, q] of diff.bids) this.book.set('bid', p, q);
    for (const [p, q] of diff.asks) this.book.set('ask', p, q);
    this.#lastUpdateId = diff.finalUpdateId;
    this.#awaitingFirst = false;
    return 'applied';
  }
}
