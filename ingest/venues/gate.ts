// Gate spot websocket v4: https://www.gate.com/docs/developers/apiv4/ws/en/
// Channels: spot.trades, spot.obu (order book v2, https://www.gate.com/announcements/article/45317:
// a full book on subscription, then updates numbered U..u; an update whose U is not the last u + 1
// means a loss, and the cure is to unsubscribe and subscribe again), spot.ping.
// Pairs: GET /api/v4/spot/currency_pairs; their bases' contracts: GET /api/v4/spot/currencies.
// Trade history: GET /api/v4/spot/trades
// (https://www.gate.com/docs/developers/apiv4/en/#query-market-transaction-records).
import { z } from 'zod';
import type { RawLevel } from '../orderBook.ts';
import { batches, catalogued, mappedContract, named, parseJson, unknown, withBaseCurrencies } from '../venue.ts';
import type { BaseCurrency, HistoryCursor, HistoryPage, MarketListing, SocketPlan, TradeHistoryRule, TradeMessage, VenueDescriptor, VenueMessage } from '../venue.ts';

const levels = z.array(z.tuple([z.string(), z.string()]));
const envelope = z.object({ channel: z.string(), event: z.string().optional(), result: z.unknown(), error: z.unknown().optional() }).loose();
const error = z.object({ code: z.number(), message: z.string() }).loose();
const trade = z.object({ id: z.number(), create_time_ms: z.string(), side: z.enum(['buy', 'sell']), currency_pair: z.string(), amount: z.string(), price: z.string() }).loose();
// Made once: schemas made per message showed in the collectors' thread's profile (test/bench/RESULTS.md).
// The documentation shows one trade per message; a list is accepted too.
const tradeOrList = z.union([trade, z.array(trade)]);
/** REST trades: the stream's fields, ids as strings. */
const restTrade = z.object({ id: z.string(), create_time_ms: z.string(), side: z.enum(['buy', 'sell']), currency_pair: z.string(), amount: z.string(), price: z.string() }).loose();
const obu = z
  .object({ t: z.number(), s: z.string().regex(/^ob\..+\.\d+$/), full: z.boolean().optional(), U: z.number().optional(), u: z.number(), b: levels.optional(), a: levels.optional() })
  .loose();
const pairs = z.array(z.object({ id: z.string(), base: z.string(), base_name: z.string().optional(), quote: z.string(), trade_status: z.string() }).loose());

/**
 * GET /api/v4/spot/currencies: each currency with its chains and the contract on each (`addr`, empty
 * for a chain's own coin). An earlier form listed one entry per currency and chain (`USDT_ETH`) with
 * no `chains` and no address: such entries give no contracts. A malformed chain list reads as none.
 */
const currencyChain = z.object({ name: z.string(), addr: z.string().nullable().optional() }).loose();
const currencies = z.array(z.object({ currency: z.string(), chains: z.array(currencyChain).nullable().optional().catch(null) }).loose());
/**
 * Gate chain id -> CoinGecko platform id, for the chains of the recorded currency list: USDT's
 * contract there on `ETH` and `BSC` is the catalog's tether contract on ethereum and
 * binance-smart-chain; `ARBEVM` is Arbitrum One (ccxt's recorded currencies map it to ARBITRUM_ONE).
 * Any other chain is skipped, not guessed.
 */
const platformOfChain: Readonly<Record<string, string>> = {
  ETH: 'ethereum',
  BSC: 'binance-smart-chain',
  ARBEVM: 'arbitrum-one',
};

/** Contracts by currency code, from GET /api/v4/spot/currencies: one for each chain we map that gives an address. */
export function parseCurrencies(json: unknown): Map<string, BaseCurrency> {
  return new Map(
    currencies.parse(json).flatMap((c) => {
      const contracts = (c.chains ?? []).flatMap((ch) => mappedContract(platformOfChain, ch.name, ch.addr));
      return contracts.length > 0 ? [[c.currency, { contracts }] as const] : [];
    }),
  );
}

const toRaw = (raw: z.infer<typeof levels> | undefined): RawLevel[] => (raw ?? []).map(([p, q]) => [p, q]);

/** Pairs open for trading (`trade_status` "tradable"). */
export function parsePairs(json: unknown): MarketListing[] {
  return pairs
    .parse(json)
    .filter((p) => p.trade_status === 'tradable')
    .map((p) => ({ symbol: p.id, base: p.base, quote: p.quote, contractSize: '1', ...named(p.base_name) }));
}

/** Levels of the spot.obu stream we follow (50, pushed every 20 ms; or 400 every 100 ms). */
const bookLevels = 50;
/** `ob.BTC_USDT.50`: the stream name of a pair's book. */
const bookStream = (pair: string) => `ob.${pair}.${bookLevels}`;

export function parseGate(text: string): VenueMessage[] {
  const e = envelope.safeParse(parseJson(text));
  if (!e.success) return unknown;
  const { channel, event, result } = e.data;
  if (e.data.error !== undefined && e.data.error !== null) {
    const err = error.safeParse(e.data.error);
    return [{ kind: 'control', what: 'error', detail: err.success ? `${err.data.code}: ${err.data.message}` : JSON.stringify(e.data.error) }];
  }
  if (channel === 'spot.pong') return [{ kind: 'control', what: 'pong' }];
  if (event === 'subscribe' || event === 'unsubscribe') return [{ kind: 'control', what: 'ack' }];
  if (event !== 'update') return unknown;
  if (channel === 'spot.trades') {
    const t = tradeOrList.safeParse(result);
    if (!t.success) return unknown;
    // `side` is the taker's; create_time_ms is milliseconds with a fraction ("1606292218213.4578").
    return [t.data]
      .flat()
      .map((d) => ({ kind: 'trade', symbol: d.currency_pair, tradeId: String(d.id), price: d.price, quantity: d.amount, side: d.side, ts: Math.floor(Number(d.create_time_ms)) }));
  }
  if (channel === 'spot.obu') {
    const b = obu.safeParse(result);
    if (!b.success) return unknown;
    const d = b.data;
    const symbol = d.s.slice('ob.'.length, d.s.lastIndexOf('.'));
    // A full book carries only u; an update carries U and u. The venue may resend a full book at any time.
    if (d.full) return [{ kind: 'book', symbol, snapshot: true, bids: toRaw(d.b), asks: toRaw(d.a), lastId: d.u, ts: d.t }];
    if (d.U === undefined) return unknown;
    return [{ kind: 'book', symbol, snapshot: false, bids: toRaw(d.b), asks: toRaw(d.a), firstId: d.U, lastId: d.u, ts: d.t }];
  }
  return unknown;
}

/** Pairs per spot.trades subscribe message. */
const pairsPerMessage = 50;
/** Pairs per connection. Gate publishes no per-connection cap: this keeps one socket's stream modest. */
const pairsPerSocket = 200;

/** Gate wants the request time (seconds) in every request. */
const request = (channel: string, event: 'subscribe' | 'unsubscribe', payload: readonly string[]) =>
  JSON.stringify({ time: Math.floor(Date.now() / 1_000), channel, event, payload });

const bookMessages = (event: 'subscribe' | 'unsubscribe', pairs: readonly string[]) => pairs.map((p) => request('spot.obu', event, [bookStream(p)]));

/** Trades a page holds: the most the endpoint serves (default 100). */
const historyPageSize = 1_000;

/**
 * The trades after the cursor's trade id (`last_id`, `reverse=false`: "records greater than
 * last_id"); a cursor without an id asks by time (`from`, seconds; the docs do not say in which order
 * a time range answers).
 */
function spotTradesUrl(rest: string, symbol: string, after: HistoryCursor): string {
  const from = after.tradeId === undefined ? `from=${Math.floor(after.ts / 1_000)}` : `last_id=${encodeURIComponent(after.tradeId)}&reverse=false`;
  return `${rest}/api/v4/spot/trades?currency_pair=${encodeURIComponent(symbol)}&limit=${historyPageSize}&${from}`;
}

/**
 * One page; a full one may have more after it. Rows also carry `sequence_id`, consecutive per pair,
 * which the live stream does not: trades here are placed by time, as the live ones are.
 */
export function parseSpotTrades(json: unknown): HistoryPage | undefined {
  const rows = z.array(restTrade).safeParse(json);
  if (!rows.success) return undefined;
  return {
    trades: rows.data.map((d): TradeMessage => ({
      kind: 'trade', symbol: d.currency_pair, tradeId: d.id, price: d.price, quantity: d.amount, side: d.side, ts: Math.floor(Number(d.create_time_ms)),
    })),
    more: rows.data.length >= historyPageSize,
  };
}

const history: TradeHistoryRule = {
  // Live trade ids are exchange-wide (recorded NEO_BTC ids 816995970, 816995982, 816996982...): they
  // number no pair's trades, and the stream carries no sequence_id. Gaps are found by time.
  continuity: 'time',
  rest: {
    // "By default, queries the last 30 days"; deeper is not documented.
    reachMs: 30 * 86_400_000,
    // Public endpoints: 200 requests per 10 s each (Gate rate limits, via api-evangelist); a quarter.
    requestsPerSecond: 5,
    url: spotTradesUrl,
    parse: parseSpotTrades,
  },
};

export const gate: VenueDescriptor = {
  ...catalogued('gate'),
  docs: 'https://www.gate.com/docs/developers/apiv4/ws/en/',
  endpoints: { ws: 'wss://api.gateio.ws', rest: 'https://api.gateio.ws' },
  channels: ['trades', 'books'],
  quotes: ['USDT', 'USDC', 'USD'],
  // The pairs name their bases (base_name); the currency list adds their contracts.
  listMarkets: (io, endpoints) =>
    withBaseCurrencies(
      io.getJson(`${endpoints.rest}/api/v4/spot/currency_pairs`).then(parsePairs),
      async () => parseCurrencies(await io.getJson(`${endpoints.rest}/api/v4/spot/currencies`)),
    ),
  sockets: (endpoints, markets) =>
    batches(markets, pairsPerSocket).map((group): SocketPlan => {
      const symbols = group.map((m) => m.symbol);
      return {
        url: `${endpoints.ws}/ws/v4/`,
        symbols,
        // A getter: the requests are stamped with the time of each (re)connect, not of the plan.
        get subscribe() {
          return [...batches(symbols, pairsPerMessage).map((p) => request('spot.trades', 'subscribe', p)), ...bookMessages('subscribe', symbols)];
        },
      };
    }),
  // Websocket ping frames, which Gate's own example client sends too (its spot.ping request would
  // need a fresh request time in every ping).
  keepAlive: { pingEveryMs: 15_000, staleAfterMs: 45_000 },
  // No published limit on client messages; each book stream is its own subscribe request.
  sendsPerSecond: 20,
  parse: parseGate,
  book: {
    // Each update starts right after the last one; a full book (on subscription, or resent) replaces the book.
    sequence: (lastId, update) => ((update.lastId ?? Infinity) <= lastId ? 'stale' : update.firstId === lastId + 1 ? 'apply' : 'gap'),
    depth: bookLevels,
    resubscribe: (symbols) => [...bookMessages('unsubscribe', symbols), ...bookMessages('subscribe', symbols)],
  },
  history,
};
