// Coinbase Advanced Trade market data websocket: https://docs.cdp.coinbase.com/coinbase-app/advanced-trade-apis/websocket/websocket-channels
// Channels: market_trades, level2 (messages arrive on channel "l2_data": a snapshot, then
// updates), heartbeats. Every message carries `sequence_num`, one counter for the whole
// connection: a jump means a message was lost, and with it possibly a book update.
// Products: GET /api/v3/brokerage/market/products (public). Their bases' token contracts: the
// Exchange API's GET /currencies (public), each network's `contract_address`. Trade history: the
// Exchange API's GET /products/{id}/trades (https://docs.cdp.coinbase.com/api-reference/exchange-api/rest-api/products/get-product-trades),
// whose trade ids are the ones market_trades sends.
import { z } from 'zod';
import type { RawLevel } from '../orderBook.ts';
import { batches, catalogued, integerTradeNumber, mappedContract, named, parseJson, unknown, withBaseCurrencies } from '../venue.ts';
import type { BaseCurrency, HistoryCursor, HistoryPage, MarketListing, TradeHistoryRule, TradeMessage, VenueDescriptor, VenueMarket, VenueMessage } from '../venue.ts';

const envelope = z.object({ channel: z.string(), timestamp: z.string(), sequence_num: z.number(), events: z.array(z.unknown()) }).loose();
const tradesEvent = z.object({
  type: z.enum(['snapshot', 'update']),
  trades: z.array(z.object({ trade_id: z.string(), product_id: z.string(), price: z.string(), size: z.string(), side: z.enum(['BUY', 'SELL']), time: z.string() }).loose()),
});
const l2Event = z.object({
  type: z.enum(['snapshot', 'update']),
  product_id: z.string(),
  updates: z.array(z.object({ side: z.enum(['bid', 'offer']), price_level: z.string(), new_quantity: z.string() }).loose()),
});
/** Exchange API trades: newest first; `side` is the maker's. */
const exchangeTrades = z.array(z.object({ trade_id: z.number(), price: z.string(), size: z.string(), side: z.enum(['buy', 'sell']), time: z.string() }).loose());
const products = z.object({
  products: z.array(
    z
      .object({
        product_id: z.string(),
        base_currency_id: z.string(),
        quote_currency_id: z.string(),
        status: z.string(),
        trading_disabled: z.boolean().optional(),
        product_type: z.string().optional(),
        alias: z.string().optional(),
        base_name: z.string().optional(),
      })
      .loose(),
  ),
});

/**
 * The Exchange API's GET /currencies: each currency's networks. `contract_address` is null on a
 * coin's own network and "" where Coinbase gives none (the recording: USDC on base, arbitrum and
 * optimism). A malformed network list reads as none.
 */
const exchangeCurrencies = z.array(
  z.object({ id: z.string(), supported_networks: z.array(z.object({ id: z.string(), contract_address: z.string().nullable().optional() }).loose()).optional().catch([]) }).loose(),
);
/**
 * Coinbase network id -> CoinGecko platform id (the catalog's `platforms` keys), for the networks
 * whose contracts the recorded currency list shows and the catalog confirms: USDT's and USDC's on
 * `ethereum`, USDC's on `solana` and on `avacchain` (avalanche). `polygon` is left out: the
 * recording's USDC there is the bridged token (0x2791...), not the catalog's USDC on polygon-pos
 * (0x3c49...). Any other network is skipped, not guessed.
 */
const platformOfNetwork: Readonly<Record<string, string>> = { ethereum: 'ethereum', solana: 'solana', avacchain: 'avalanche' };

/** Contracts by currency code, from the Exchange API's GET /currencies: one for each network we map that gives an address. */
export function parseExchangeCurrencies(json: unknown): Map<string, BaseCurrency> {
  return new Map(
    exchangeCurrencies.parse(json).flatMap((c) => {
      const contracts = (c.supported_networks ?? []).flatMap((n) => mappedContract(platformOfNetwork, n.id, n.contract_address));
      return contracts.length > 0 ? [[c.id, { contracts }] as const] : [];
    }),
  );
}

/** Online spot products. A product that is an alias of another (BTC-USDC of BTC-USD) shares its book and trades: left out. */
export function parseProducts(json: unknown): MarketListing[] {
  return products
    .parse(json)
    .products.filter((p) => p.status === 'online' && !p.trading_disabled && (p.product_type ?? 'SPOT') === 'SPOT' && !p.alias)
    .map((p) => ({ symbol: p.product_id, base: p.base_currency_id, quote: p.quote_currency_id, contractSize: '1', ...named(p.base_name) }));
}

/** A trade id as its number in the product's sequence (ids run consecutively per product). */
const numberOf = (tradeId: string) => (/^\d{1,15}$/.test(tradeId) ? { seq: Number(tradeId) } : {});

export function parseCoinbase(text: string): VenueMessage[] {
  const json = parseJson(text) as Record<string, unknown> | undefined;
  if (typeof json !== 'object' || json === null) return unknown;
  if (json.type === 'error') return [{ kind: 'control', what: 'error', detail: String(json.message ?? 'error') }];
  const e = envelope.safeParse(json);
  if (!e.success) return unknown;
  const { channel, events } = e.data;
  const out: VenueMessage[] = [{ kind: 'sequence', value: e.data.sequence_num }];
  switch (channel) {
    case 'market_trades':
      for (const raw of events) {
        const ev = tradesEvent.safeParse(raw);
        if (!ev.success) return [...out, { kind: 'unknown' }];
        // The first event of a subscription is a snapshot of recent trades, already counted when they happened.
        if (ev.data.type === 'snapshot') continue;
        // `side` is the MAKER's side, as on Coinbase Exchange's `match` channel: recorded trades marked
        // SELL print at the best ask and consume it (ingest/EVENTS.md, verification table).
        // A batch lists its trades newest first: they go out in the order they printed, so that a
        // trade number is never seen after a later one (which would look like a gap).
        for (const t of [...ev.data.trades].reverse())
          out.push({ kind: 'trade', symbol: t.product_id, tradeId: t.trade_id, ...numberOf(t.trade_id), price: t.price, quantity: t.size, side: t.side === 'SELL' ? 'buy' : 'sell', ts: Date.parse(t.time) });
      }
      return out;
    case 'l2_data': {
      const ts = Date.parse(e.data.timestamp);
      for (const raw of events) {
        const ev = l2Event.safeParse(raw);
        if (!ev.success) return [...out, { kind: 'unknown' }];
        const bids: RawLevel[] = [];
        const asks: RawLevel[] = [];
        for (const u of ev.data.updates) (u.side === 'bid' ? bids : asks).push([u.price_level, u.new_quantity]);
        out.push({ kind: 'book', symbol: ev.data.product_id, snapshot: ev.data.type === 'snapshot', bids, asks, ts });
      }
      return out;
    }
    case 'heartbeats':
      out.push({ kind: 'control', what: 'heartbeat' });
      return out;
    case 'subscriptions':
      out.push({ kind: 'control', what: 'ack' });
      return out;
    default:
      out.push({ kind: 'unknown' });
      return out;
  }
}

/** Product ids per subscribe message. */
const productsPerMessage = 50;

const channelMessages = (type: 'subscribe' | 'unsubscribe', channel: string, symbols: readonly string[]) =>
  batches(symbols, productsPerMessage).map((product_ids) => JSON.stringify({ type, product_ids, channel }));

/** Trades a page holds: the most the endpoint serves (its default). */
const historyPageSize = 1_000;
const advancedTradeRest = 'https://api.coinbase.com';
/** The trade history and the currency list are on the Exchange API's host; an overridden REST base (a proxy, the simulator) serves all. */
const exchangeApiHost = (rest: string) => (rest === advancedTradeRest ? 'https://api.exchange.coinbase.com' : rest);

/**
 * Pages are cursors over trade ids: `after` = older than, `before` = newer than ("page after is an
 * older page", Exchange API pagination). Both bound the page right after trade L: newer than L, older
 * than L + 1 + a page (`?after=32278546&before=32278544` answers the one id between, Koinju).
 * Without a number only the latest page can be asked.
 */
function productTradesUrl(rest: string, symbol: string, after: HistoryCursor): string {
  const range = after.seq === undefined ? '' : `&before=${after.seq}&after=${after.seq + 1 + historyPageSize}`;
  return `${exchangeApiHost(rest)}/products/${encodeURIComponent(symbol)}/trades?limit=${historyPageSize}${range}`;
}

/**
 * One page, newest first. An empty page found nothing after the cursor; any other may have more
 * (ids that never became trades leave a page short, so its length says nothing).
 */
export function parseProductTrades(json: unknown, symbol: string): HistoryPage | undefined {
  const rows = exchangeTrades.safeParse(json);
  if (!rows.success) return undefined;
  return {
    trades: rows.data.map((t): TradeMessage => ({
      kind: 'trade', symbol, tradeId: String(t.trade_id), seq: t.trade_id, price: t.price, quantity: t.size, side: t.side === 'sell' ? 'buy' : 'sell', ts: Date.parse(t.time),
    })),
    more: rows.data.length > 0,
  };
}

const history: TradeHistoryRule = {
  // trade_id runs consecutively per product (recorded market_trades: 1100253488, ...489, ..., ...497),
  // with rare ids that never became trades (1,128 of 4.2 M, Koinju).
  continuity: 'sequential',
  // The stored trade id is the trade's number: a restart's recovery starts from it.
  seqOf: integerTradeNumber,
  rest: {
    // The whole history (Koinju, aggr-binaries page it from any id): no reach set.
    // Public endpoints: 10 requests a second per IP, bursts of 15 (Exchange REST rate limits).
    requestsPerSecond: 5,
    url: productTradesUrl,
    parse: parseProductTrades,
  },
};

export const coinbase: VenueDescriptor = {
  ...catalogued('coinbase'),
  docs: 'https://docs.cdp.coinbase.com/coinbase-app/advanced-trade-apis/websocket/websocket-channels',
  endpoints: { ws: 'wss://advanced-trade-ws.coinbase.com', rest: advancedTradeRest },
  channels: ['trades', 'books'],
  quotes: ['USD', 'USDT', 'USDC'],
  // Names come with the products; the currency list adds the contracts.
  listMarkets: (io, endpoints) =>
    withBaseCurrencies(
      io.getJson(`${endpoints.rest}/api/v3/brokerage/market/products?product_type=SPOT`).then(parseProducts),
      async () => parseExchangeCurrencies(await io.getJson(`${exchangeApiHost(endpoints.rest)}/currencies`)),
    ),
  sockets: (endpoints, markets: readonly VenueMarket[]) => {
    const symbols = markets.map((m) => m.symbol);
    return [
      {
        url: endpoints.ws,
        symbols,
        // One channel per message; heartbeats keep quiet product channels from being closed after 60-90 s.
        subscribe: [JSON.stringify({ type: 'subscribe', channel: 'heartbeats' }), ...channelMessages('subscribe', 'market_trades', symbols), ...channelMessages('subscribe', 'level2', symbols)],
      },
    ];
  },
  // Heartbeats arrive every second; our websocket pings are answered too.
  keepAlive: { pingEveryMs: 15_000, staleAfterMs: 30_000 },
  sendsPerSecond: 5,
  parse: parseCoinbase,
  book: {
    // No per-book sequence: the connection's sequence_num guards the books (see the collector).
    resubscribe: (symbols) => [...channelMessages('unsubscribe', 'level2', symbols), ...channelMessages('subscribe', 'level2', symbols)],
  },
  history,
};
