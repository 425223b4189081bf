// What a native venue is: a declarative descriptor plus pure parse functions. The lifecycle
// (ingest/connection.ts), the book rules engine (ingest/bookSync.ts) and the collector
// (ingest/collector.ts and the parts it wires) are written once and drive any descriptor; the
// conversion to events is ingest/normalize.ts. Rules: ingest/EVENTS.md.
import { z } from 'zod';
import { findVenue, type CatalogVenue } from '../infra/catalog/catalog.ts';
import { ConfigError } from '../infra/config.ts';
import type { ConnectLimit } from './connectBudget.ts';
import { baseContract, evmAddressPattern, maxBaseContracts, maxBaseNameLength, type BaseContract, type Channel } from '../infra/events.ts';
import type { OrderBook, RawLevel } from './orderBook.ts';

/** A market as the venue lists it, before it is matched to the catalog. */
export interface MarketListing {
  /** The venue's symbol, as it appears in messages (BTCUSDT, BTC-USDT-SWAP, BTC/USD). */
  symbol: string;
  /** Base and quote tickers as the venue writes them. */
  base: string;
  quote: string;
  /** The base asset's full name, where the venue gives one (Coinbase's and Gate's `base_name`; KuCoin's and Bitfinex's currency lists). */
  baseName?: string;
  /** The base token's contracts, one per platform, where the venue gives them (KuCoin's, Coinbase's and Gate's currency lists), through `contracted()`. */
  baseContracts?: BaseContract[];
  /**
   * Base units per unit of the quantities the venue reports, as a decimal string: "1" for base units.
   * Inverse markets: quote units per contract instead (BitMEX XBTUSD: 1 USD).
   */
  contractSize: string;
  /** Inverse contracts (XBTUSD): quantities count in the quote currency; base = contracts x contractSize / price. */
  inverse?: boolean;
  /** Decimals the venue formats prices and quantities with (Kraken's checksum needs them). */
  priceDecimals?: number;
  qtyDecimals?: number;
}

/** A market we collect: the listing plus the id of its base asset (catalog or discovered). */
export interface VenueMarket extends MarketListing {
  asset: string;
  /**
   * Units of the asset per listed unit, when the operator mapped a scaled ticker to it
   * (infra/catalog/identities.ts: 1000PEPE is 1000 PEPE): prices are divided by it, quantities multiplied.
   */
  unitScale?: number;
}

/** A change of (or the whole of) one market's book, as the venue sent it. */
export interface BookMessage {
  kind: 'book';
  symbol: string;
  /** The whole book (levels not listed are gone), or changes to apply. */
  snapshot: boolean;
  bids: RawLevel[];
  asks: RawLevel[];
  /** Venue time of the change, when the venue gives one. */
  ts?: number;
  /** Venue sequence numbers, when it has them: first and last update id carried, previous message's last id. */
  firstId?: number;
  lastId?: number;
  prevId?: number;
  /** Venue checksum of its book after this message. */
  checksum?: number;
}

/** One trade as the venue reported it (a websocket frame or a REST page can carry several). */
export interface TradeMessage {
  kind: 'trade';
  symbol: string;
  tradeId: string;
  price: string;
  quantity: string;
  side: 'buy' | 'sell';
  ts: number;
  /**
   * Where the venue numbers each market's trades consecutively (`history.continuity` is
   * 'sequential'): this trade's number, from which a missing trade is seen. A message that
   * aggregates fills (OKX `trades`: `count`) carries the number of its last fill.
   */
  seq?: number;
  /** Fills this message aggregates, numbered seq - fills + 1 .. seq (default 1). */
  fills?: number;
}

/** What one venue message means; a frame can carry several (a batch of trades). */
export type VenueMessage =
  | TradeMessage
  | {
      kind: 'liquidation';
      symbol: string;
      liquidationId: string;
      price: string;
      quantity: string;
      /** The position that was closed. */
      positionSide: 'long' | 'short';
      /** Venue time; venues that send none (BitMEX) leave it out and the receive time stands in. */
      ts?: number;
    }
  | BookMessage
  /** A connection-wide message counter (Coinbase): a jump means messages were lost. */
  | { kind: 'sequence'; value: number }
  | { kind: 'control'; what: 'ack' | 'heartbeat' | 'pong' | 'reconnect' | 'error' | 'status'; detail?: string }
  | { kind: 'unknown' };

/** Where one socket connects, when the venue says so per connection (KuCoin's token and endpoint). */
export interface ResolvedEndpoint {
  url: string;
  /** The venue's own ping interval for this connection; the keep-alive default otherwise. */
  pingEveryMs?: number;
}

/** One websocket the collector keeps open, and what to send on it after every (re)connect. */
export interface SocketPlan {
  url: string;
  /** Venues that hand out a fresh endpoint per connection: asked before every (re)connect, replacing `url`. */
  connectUrl?(io: VenueIo): Promise<ResolvedEndpoint>;
  /** Already cut into the batches the venue accepts. */
  subscribe: string[];
  /** Markets whose streams this socket carries. */
  symbols: string[];
}

export interface KeepAlive {
  /** How often we ping: with `message` (the venue's application-level ping), else a websocket ping frame. */
  pingEveryMs: number;
  message?: string;
  /**
   * Nothing at all for this long (no data, heartbeat, ping or pong) means a dead socket. A quiet
   * market still answers pings and sends heartbeats, so it never trips this.
   */
  staleAfterMs: number;
}

export interface RestSnapshot {
  lastId: number;
  bids: RawLevel[];
  asks: RawLevel[];
}

/** How a venue's book is kept in sync; ingest/bookSync.ts applies the rule. */
export interface BookRule {
  /** Venues whose streams carry only changes: where a market's snapshot comes from. */
  restSnapshot?: { url(restBase: string, symbol: string): string; parse(json: unknown): RestSnapshot };
  /**
   * Whether an update continues a book whose last applied id is `lastId`; `fresh` is true for the
   * first update after a snapshot. Venues without sequence numbers leave it out.
   */
  sequence?(lastId: number, update: BookMessage, fresh: boolean): 'apply' | 'stale' | 'gap';
  /** The venue's checksum of our book, compared with the one the message carries. */
  checksum?(book: OrderBook, market: VenueMarket): number;
  /** Levels per side the venue maintains: the book is cut to it after each update. */
  depth?: number;
  /** Stream venues: the messages that make the venue send a fresh snapshot of these markets. */
  resubscribe?(symbols: readonly string[]): string[];
}

/** Network access a venue's market listing may use (a REST call, or a one-off websocket request). */
export interface VenueIo {
  getJson(url: string): Promise<unknown>;
  /** A POST with a JSON body (KuCoin hands out connection tokens this way). */
  postJson(url: string, body?: unknown): Promise<unknown>;
  /** Opens `url`, sends `messages`, and resolves with the first `pick(message)` that is not undefined. */
  wsRequest<T>(url: string, messages: readonly string[], pick: (message: unknown) => T | undefined): Promise<T>;
}

export interface VenueEndpoints {
  ws: string;
  rest: string;
}

/**
 * What one connection remembers, for venues whose frames only make sense with what the same
 * connection said earlier: Bitfinex numbers its channels per connection, in the frames and in
 * unsubscribe requests.
 */
export interface VenueSession {
  /** As `VenueDescriptor.parse`, knowing what this connection was told before. */
  parse(text: string): VenueMessage[];
  /** Replaces `book.resubscribe` on this connection. */
  resubscribe?(symbols: readonly string[]): string[];
}

/** A trade id that is its number (Binance, OKX, Coinbase, Kraken): `TradeHistoryRule.seqOf` of those venues. */
export const integerTradeNumber = (tradeId: string): number | undefined => (/^\d{1,15}$/.test(tradeId) ? Number(tradeId) : undefined);

/** Where a recovery stands in a market's trades: after this trade (its number where the venue has them). */
export interface HistoryCursor {
  ts: number;
  seq?: number;
  /** The venue's id of that trade, for venues that page by id without numbering trades. */
  tradeId?: string;
}

/** One page of a venue's REST trade history. */
export interface HistoryPage {
  /** In any order; those at or before the cursor asked for may be among them (they are dropped). */
  trades: TradeMessage[];
  /** The venue may hold trades after the newest of `trades` that this page did not carry. */
  more: boolean;
}

/**
 * What a venue lets us know of the trades we missed (a socket down, a restart, an overload) and
 * recover from its REST history. Research and sources: the venue file's header and
 * ingest/venues/ADDING_A_VENUE.md; the recovery that uses it: ingest/historyRecovery.ts.
 */
export interface TradeHistoryRule {
  /**
   * 'sequential': the venue numbers each market's trades consecutively (`TradeMessage.seq`), so a
   * missing trade is seen by its number, and a recovery knows when it has them all. 'time': its ids
   * say nothing of what is missing; a socket down or a restart marks a gap, from the last trade
   * stored to the first after it.
   */
  continuity: 'sequential' | 'time';
  /**
   * Sequential venues whose trade id is (or carries) the trade's number: that number, read back
   * from a stored trade id (where a restart's recovery starts). Pure.
   */
  seqOf?(tradeId: string): number | undefined;
  /**
   * 'time' venues whose trade ids are integers that rise with time within a market (Bitstamp,
   * Bitfinex, KuCoin, Bybit spot): a recovery places trades by id, not by a REST time that may be
   * coarser than the live one (Bitstamp's REST is to the second).
   */
  idsRise?: boolean;
  /** The venue's REST trade history; absent when the venue has none (nothing can be recovered). */
  rest?: {
    /** How old a trade the endpoint still serves (ms); undefined when it serves the whole history. */
    reachMs?: number;
    /**
     * Endpoints that serve only the latest trades of a market and page no further back (Bybit,
     * KuCoin): how many. A gap with more trades than this after its start is partly unrecoverable.
     */
    latestOnly?: number;
    /** Requests a second that recovery may send to this venue, under its documented limit. */
    requestsPerSecond: number;
    /** The history's trade times are rounded down to this many ms (Bitstamp's REST: 1,000); default 1. */
    timeResolutionMs?: number;
    /** The URL of the next page: trades after `after`, oldest first where the venue can. Pure. */
    url(restBase: string, symbol: string, after: HistoryCursor): string;
    /** One page. Pure; never throws; undefined for a body it does not understand. */
    parse(json: unknown, symbol: string): HistoryPage | undefined;
  };
}

export interface VenueDescriptor {
  /** Our venue id: one per venue and market kind (binance, binance-futures). */
  id: string;
  name: string;
  contract: CatalogVenue['contract'];
  /** The venue's documentation of what this file implements. */
  docs: string;
  /** Production endpoints; `VENUE_<ID>_WS_URL` and `VENUE_<ID>_REST_URL` override them. */
  endpoints: VenueEndpoints;
  channels: readonly Channel[];
  /** Liquidation feeds that publish a sample, not every liquidation, say so and why. */
  liquidations?: { sampled: boolean; rule: string };
  /** Quote currencies of the markets we follow. */
  quotes: readonly string[];
  listMarkets(io: VenueIo, endpoints: VenueEndpoints): Promise<MarketListing[]>;
  sockets(endpoints: VenueEndpoints, markets: readonly VenueMarket[]): SocketPlan[];
  keepAlive: KeepAlive;
  /** The venue closes connections older than this: we rotate to a fresh one before it does. */
  maxConnectionMs?: number;
  /** Messages we may send per second on one connection (subscriptions and pings count). */
  sendsPerSecond: number;
  /** New connections the venue allows one address in a window, where it documents a limit: each socket waits its turn. */
  connectLimit?: ConnectLimit;
  /**
   * Subscribe and unsubscribe requests the venue allows on one connection in any hour, where it
   * documents a limit: a book resync that would pass it rotates the socket instead (venueSocket.ts).
   */
  subscribesPerHour?: number;
  /** Pure: one text frame to what it means. Never throws; unknown frames give `{ kind: 'unknown' }`. */
  parse(text: string): VenueMessage[];
  /** A fresh session for each connection, where `parse` alone cannot understand a frame (see VenueSession). */
  session?(): VenueSession;
  book: BookRule;
  /** How missed trades are found and recovered; absent: time gaps only, nothing recovered. */
  history?: TradeHistoryRule;
}

/** A venue's id, name and contract kind, from the venue catalog (infra/catalog/venues.json), which the API serves too. */
export function catalogued(id: string): Pick<CatalogVenue, 'id' | 'name' | 'contract'> {
  const venue = findVenue(id);
  if (!venue) throw new Error(`venue ${id} is not in infra/catalog/venues.json`);
  return { id: venue.id, name: venue.name, contract: venue.contract };
}

/** A listing's `baseName`, from a name the venue gave: trimmed; nothing when it gave none, or an empty or overlong one. */
export function named(name: string | undefined): Pick<MarketListing, 'baseName'> {
  const trimmed = name?.trim();
  return trimmed && trimmed.length <= maxBaseNameLength ? { baseName: trimmed } : {};
}

/**
 * A listing's `baseContracts`, from the contracts a venue gave: EVM addresses (0x and 40 hex digits)
 * in lower case, as chains compare them; the first contract of each platform; malformed ones and
 * those past maxBaseContracts dropped; nothing when none is left.
 */
export function contracted(contracts: readonly BaseContract[] | undefined): Pick<MarketListing, 'baseContracts'> {
  const byPlatform = new Map<string, BaseContract>();
  for (const c of contracts ?? []) {
    const address = c.address.trim();
    const contract = { platform: c.platform, address: evmAddressPattern.test(address) ? address.toLowerCase() : address };
    if (baseContract.safeParse(contract).success && !byPlatform.has(c.platform) && byPlatform.size < maxBaseContracts) byPlatform.set(c.platform, contract);
  }
  return byPlatform.size > 0 ? { baseContracts: [...byPlatform.values()] } : {};
}

/**
 * The contract a venue's currency list gives on one of its networks, where `platformOf` (the venue's
 * own network id -> CoinGecko platform id) maps that network and the address is not empty (a
 * chain's native coin): none otherwise.
 */
export function mappedContract(platformOf: Readonly<Record<string, string>>, network: string, address: string | null | undefined): BaseContract[] {
  const platform = Object.hasOwn(platformOf, network) ? platformOf[network] : undefined;
  const trimmed = address?.trim();
  return platform && trimmed ? [{ platform, address: trimmed }] : [];
}

/** What a venue's currency list says of one currency code. */
export interface BaseCurrency {
  name?: string;
  contracts?: readonly BaseContract[];
}

/**
 * Listings with what a venue's separate currency list (currency code to name and contracts), fetched
 * by `fetchCurrencies`, says of their bases. A failed fetch lists the markets without either: a name
 * or a contract is worth a later re-listing, not a market.
 */
export async function withBaseCurrencies(listings: Promise<MarketListing[]>, fetchCurrencies: () => Promise<ReadonlyMap<string, BaseCurrency>>): Promise<MarketListing[]> {
  const [listed, currencies] = await Promise.all([listings, fetchCurrencies().catch(() => new Map<string, BaseCurrency>())]);
  return listed.map((l) => {
    const currency = currencies.get(l.base);
    return { ...l, ...named(currency?.name), ...contracted(currency?.contracts) };
  });
}

/** Listings with their bases' full names, from a venue's separate name list (currency code to name); see withBaseCurrencies. */
export function withBaseNames(listings: Promise<MarketListing[]>, fetchNames: () => Promise<ReadonlyMap<string, string>>): Promise<MarketListing[]> {
  return withBaseCurrencies(listings, async () => new Map([...(await fetchNames())].map(([code, name]) => [code, { name }])));
}

/** Splits `items` into runs of at most `size`. */
export function batches<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

export const unknown: VenueMessage[] = [{ kind: 'unknown' }];

/** JSON.parse that answers undefined for a frame that is not JSON. */
export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** The environment variable that overrides a venue endpoint: `VENUE_OKX_SWAP_WS_URL`. */
export function venueEnvName(id: string, what: 'WS' | 'REST'): string {
  return `VENUE_${id.toUpperCase().replace(/-/g, '_')}_${what}_URL`;
}

/** The venue's endpoints, with the environment's overrides (`VENUE_OKX_SWAP_WS_URL`...) checked. */
export function venueEndpoints(venue: Pick<VenueDescriptor, 'id' | 'endpoints'>, env: NodeJS.ProcessEnv = process.env): VenueEndpoints {
  const pick = (what: 'WS' | 'REST', fallback: string) => {
    const name = venueEnvName(venue.id, what);
    const value = env[name]?.trim();
    if (!value) return fallback;
    if (!z.url().safeParse(value).success) throw new ConfigError(`invalid configuration:\n  ${name}=${JSON.stringify(value)}: must be a URL`);
    return value.replace(/\/$/, '');
  };
  return { ws: pick('WS', venue.endpoints.ws), rest: pick('REST', venue.endpoints.rest) };
}
