// KuCoin spot websocket: https://www.kucoin.com/docs-new/websocket-api/base-info/introduction
// Every connection starts with a token and an endpoint from POST /api/v1/bullet-public (the
// endpoint also says how often to ping). Channels: /market/match (trades, `side` is the taker's),
// /market/level2 (book changes, each numbered; the book is a REST snapshot from
// /api/v1/market/orderbook/level2_100 plus the changes numbered after its `sequence`).
// Symbols: GET /api/v1/symbols; their bases' full names and contracts: GET /api/v3/currencies.
// Trade history: GET /api/v1/market/histories?symbol, the last 100 trades only, no paging
// (Kucoin/kucoin-api-docs "Get Trade Histories"; ccxt: "pagination is not supported on the exchange
// side anymore"). Its rows carry `sequence`, not `tradeId`: on the current matching engine the
// websocket's tradeId is that sequence (ccxt 4.5.84's sample; the 2022 recordings also show hex
// ids). Sequences advance with book events too, so gaps are found by time.
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import type { RawLevel } from '../orderBook.ts';
import {
  batches,
  catalogued,
  mappedContract,
  parseJson,
  unknown,
  withBaseCurrencies,
  type BaseCurrency,
  type BookMessage,
  type HistoryPage,
  type MarketListing,
  type ResolvedEndpoint,
  type SocketPlan,
  type VenueDescriptor,
  type VenueEndpoints,
  type VenueIo,
  type VenueMessage,
} from '../venue.ts';

/** KuCoin wraps every REST answer: code "200000" is success. */
const rest = <T extends z.ZodType>(data: T) => z.object({ code: z.literal('200000'), data });

const bullet = rest(
  z.object({
    token: z.string().min(1),
    instanceServers: z.array(z.object({ endpoint: z.url(), pingInterval: z.number().int().positive() }).loose()).min(1),
  }),
);
/**
 * GET /api/v3/currencies: every currency's code, full name and chains (`chains` is null for fiat).
 * A malformed chain list reads as none, so it never costs the names.
 */
const chain = z.object({ chainId: z.string(), contractAddress: z.string().nullable().optional() }).loose();
const currencies = rest(
  z.array(z.object({ currency: z.string(), fullName: z.string().optional(), chains: z.array(chain).nullable().optional().catch(null) }).loose()),
);
/**
 * KuCoin chain id -> CoinGecko platform id (the catalog's `platforms` keys), for the chains whose
 * contracts the recorded currency list shows and the catalog confirms: USDT's contract there on
 * `eth`, `bsc`, `trx` and `sol` is the catalog's tether contract on ethereum, binance-smart-chain,
 * tron and solana; `arbitrum` (chainName ARBITRUM) and `optimism` (OPTIMISM) are those rollups.
 * Any other chain (kcc, kavaevm, near, eos, algo, xtz, heco...) is skipped, not guessed.
 */
const platformOfChain: Readonly<Record<string, string>> = {
  eth: 'ethereum',
  bsc: 'binance-smart-chain',
  trx: 'tron',
  sol: 'solana',
  arbitrum: 'arbitrum-one',
  optimism: 'optimistic-ethereum',
};
const symbols = rest(z.array(z.object({ symbol: z.string(), baseCurrency: z.string(), quoteCurrency: z.string(), enableTrading: z.boolean() }).loose()));
const restLevels = z.array(z.tuple([z.string(), z.string()]));
const orderbook = rest(z.object({ sequence: z.string().regex(/^\d+$/), bids: restLevels, asks: restLevels }).loose());

const envelope = z.object({ type: z.string(), topic: z.string().optional(), subject: z.string().optional(), data: z.unknown().optional(), code: z.unknown().optional() }).loose();
const match = z
  .object({ symbol: z.string(), side: z.enum(['buy', 'sell']), price: z.string(), size: z.string(), tradeId: z.string().min(1), time: z.string().regex(/^\d{7,}$/) })
  .loose();
/** Each change: [price, size, sequence]; size "0" removes the level. */
const changes = z.array(z.tuple([z.string(), z.string(), z.string().regex(/^\d+$/)]));
/** `time` is nanoseconds, which the venue sends as a JSON number (past double precision: not a safe integer) and some copies as a string. */
const histories = rest(
  z.array(z.object({ sequence: z.string().regex(/^\d+$/), price: z.string(), size: z.string(), side: z.enum(['buy', 'sell']), time: z.union([z.number().positive().refine(Number.isInteger), z.string().regex(/^\d{7,}$/)]) }).loose()),
);
const level2 = z
  .object({ symbol: z.string(), sequenceStart: z.number(), sequenceEnd: z.number(), time: z.number().optional(), changes: z.object({ bids: changes, asks: changes }) })
  .loose();

/**
 * Full name and contracts by currency code, from GET /api/v3/currencies: a contract for each chain
 * we map to a platform that gives a non-empty address (a native coin's chain gives "").
 */
export function parseCurrencies(json: unknown): Map<string, BaseCurrency> {
  return new Map(
    currencies.parse(json).data.map((c) => {
      const contracts = (c.chains ?? []).flatMap((ch) => mappedContract(platformOfChain, ch.chainId, ch.contractAddress));
      return [c.currency, { ...(c.fullName ? { name: c.fullName } : {}), ...(contracts.length > 0 ? { contracts } : {}) }] as const;
    }),
  );
}

/** Symbols open for trading. */
export function parseSymbols(json: unknown): MarketListing[] {
  return symbols
    .parse(json)
    .data.filter((s) => s.enableTrading)
    .map((s) => ({ symbol: s.symbol, base: s.baseCurrency, quote: s.quoteCurrency, contractSize: '1' }));
}

/** The endpoint of one connection: the first instance server, with the token and a connection id of our choosing. */
export function parseBullet(json: unknown): ResolvedEndpoint {
  const { token, instanceServers } = bullet.parse(json).data;
  const server = instanceServers[0]!;
  const url = new URL(server.endpoint);
  url.searchParams.set('token', token);
  url.searchParams.set('connectId', randomUUID());
  return { url: url.toString(), pingEveryMs: server.pingInterval };
}

export function parseOrderbookSnapshot(json: unknown) {
  const d = orderbook.parse(json).data;
  return { lastId: Number(d.sequence), bids: d.bids as RawLevel[], asks: d.asks as RawLevel[] };
}

/** Nanoseconds since the epoch, as a decimal string, to whole milliseconds. */
const nsToMs = (ns: string) => Number(ns.slice(0, -6));

/**
 * A nanosecond time the venue sent as a JSON number, to whole milliseconds. The number arrives
 * rounded to a double (within 128 ns at today's times): the time rounded down to its millisecond,
 * as the websocket's string gives it, save for the 256 ns before a millisecond's end.
 */
const nsNumberToMs = (ns: number) => Number((BigInt(ns) + 128n) / 1_000_000n);

/** The most trades histories serves per market: the latest, nothing older. */
const historiesDepth = 100;

/** One histories answer: the market's last trades, never more (`more` false). `side` is the taker's. */
export function parseHistories(json: unknown, symbol: string): HistoryPage | undefined {
  const page = histories.safeParse(json);
  if (!page.success) return undefined;
  const trades = page.data.data.map((t) => ({
    kind: 'trade' as const,
    symbol,
    tradeId: t.sequence,
    price: t.price,
    quantity: t.size,
    side: t.side,
    ts: typeof t.time === 'string' ? nsToMs(t.time) : nsNumberToMs(t.time),
  }));
  return { trades, more: false };
}

export function parseKucoin(text: string): VenueMessage[] {
  const e = envelope.safeParse(parseJson(text));
  if (!e.success) return unknown;
  const { type, topic, data } = e.data;
  switch (type) {
    case 'welcome':
    case 'ack':
      return [{ kind: 'control', what: 'ack' }];
    case 'pong':
      return [{ kind: 'control', what: 'pong' }];
    case 'error':
      return [{ kind: 'control', what: 'error', detail: `${String(e.data.code)}: ${typeof data === 'string' ? data : JSON.stringify(data)}` }];
    case 'message':
      break;
    default:
      return unknown;
  }
  if (topic?.startsWith('/market/match:')) {
    const t = match.safeParse(data);
    if (!t.success) return unknown;
    const d = t.data;
    return [{ kind: 'trade', symbol: d.symbol, tradeId: d.tradeId, price: d.price, quantity: d.size, side: d.side, ts: nsToMs(d.time) }];
  }
  if (topic?.startsWith('/market/level2:')) {
    const b = level2.safeParse(data);
    if (!b.success) return unknown;
    const d = b.data;
    // Each change carries its own number: one book message per change, in order, lets the sequence
    // rule drop exactly the changes a REST snapshot already holds (a frame may straddle it).
    const split = (side: 'bid' | 'ask') =>
      (side === 'bid' ? d.changes.bids : d.changes.asks).map(([price, size, seq]) => ({ side, level: [price, size] as RawLevel, seq: Number(seq) }));
    return [...split('bid'), ...split('ask')]
      .sort((a, b) => a.seq - b.seq)
      .map(
        (c): BookMessage => ({
          kind: 'book',
          symbol: d.symbol,
          snapshot: false,
          bids: c.side === 'bid' ? [c.level] : [],
          asks: c.side === 'ask' ? [c.level] : [],
          firstId: c.seq,
          lastId: c.seq,
          ...(d.time === undefined ? {} : { ts: d.time }),
        }),
      );
  }
  return unknown;
}

/** Symbols per subscribe request (KuCoin allows 100 per topic list). */
const symbolsPerMessage = 100;
/** Symbols per connection: two topics each, well under KuCoin's 400 topics per connection. */
const symbolsPerSocket = 100;

const subscribe = (channel: string, symbols: readonly string[]) =>
  JSON.stringify({ id: randomUUID(), type: 'subscribe', topic: `${channel}:${symbols.join(',')}`, privateChannel: false, response: true });

export const kucoin: VenueDescriptor = {
  ...catalogued('kucoin'),
  docs: 'https://www.kucoin.com/docs-new/websocket-api/base-info/introduction',
  // `ws` is only a fallback for display: each connection's endpoint comes from bullet-public.
  endpoints: { ws: 'wss://ws-api-spot.kucoin.com', rest: 'https://api.kucoin.com' },
  channels: ['trades', 'books'],
  quotes: ['USDT', 'USDC', 'USD'],
  listMarkets: (io, endpoints) =>
    withBaseCurrencies(
      io.getJson(`${endpoints.rest}/api/v1/symbols`).then(parseSymbols),
      async () => parseCurrencies(await io.getJson(`${endpoints.rest}/api/v3/currencies`)),
    ),
  sockets: (endpoints: VenueEndpoints, markets) =>
    batches(markets, symbolsPerSocket).map((group): SocketPlan => {
      const symbols = group.map((m) => m.symbol);
      return {
        url: endpoints.ws,
        // A token is good for one connection: a fresh one before every (re)connect.
        connectUrl: async (io: VenueIo) => parseBullet(await io.postJson(`${endpoints.rest}/api/v1/bullet-public`)),
        symbols,
        subscribe: batches(symbols, symbolsPerMessage).flatMap((b) => [subscribe('/market/match', b), subscribe('/market/level2', b)]),
      };
    }),
  // The bullet answer's pingInterval replaces pingEveryMs on each connection (18 s today).
  keepAlive: { pingEveryMs: 18_000, message: JSON.stringify({ id: 'ping', type: 'ping' }), staleAfterMs: 60_000 },
  // 100 client messages per 10 s per connection.
  sendsPerSecond: 10,
  parse: parseKucoin,
  book: {
    restSnapshot: {
      url: (restBase, symbol) => `${restBase}/api/v1/market/orderbook/level2_100?symbol=${encodeURIComponent(symbol)}`,
      parse: parseOrderbookSnapshot,
    },
    // One change per message: those the snapshot holds are stale, then each must be the next number.
    sequence: (lastId, u) => ((u.lastId ?? Infinity) <= lastId ? 'stale' : u.firstId === lastId + 1 ? 'apply' : 'gap'),
    depth: 100,
  },
  history: {
    continuity: 'time',
    // The book sequence a trade carries rises with time: a recovery places trades by it.
    idsRise: true,
    rest: {
      latestOnly: historiesDepth,
      // Public endpoints share 2,000 weight per 30 s per IP; histories weighs 3 (about 22 a second). One request recovers a gap.
      requestsPerSecond: 5,
      url: (restBase, symbol) => `${restBase}/api/v1/market/histories?symbol=${encodeURIComponent(symbol)}`,
      parse: parseHistories,
    },
  },
};
