// The long-tail collector: any ccxt exchange's public websocket feed through ccxt's pro layer
// (https://docs.ccxt.com/#/ccxt.pro.manual). ccxt speaks the venue's protocol and keeps its books;
// this file decides what to watch, re-arms every watcher after each failure (ccxt reconnects and
// resubscribes only when a watcher is called again), and turns ccxt's unified trades, books and
// liquidations into our events by the rules of ingest/EVENTS.md, with the native collector's metrics.
import type { Exchange, Liquidation, Market, OrderBook as CcxtOrderBook, Trade } from 'ccxt';
import type { Bus } from '../infra/bus/bus.ts';
import type { BookEvent, LiquidationEvent, TradeEvent } from '../infra/events.ts';
import type { Logger } from '../infra/log.ts';
import { backoffDelayMs, sharedTuningDefaults, startCollectorShell, type Collector, type CollectorCounts, type SharedTuning } from './collectorKit.ts';
import { decimalProduct } from './decimal.ts';
import { eventTimeCheck, selectMarkets, statusEvents, toBookEvent, toLiquidationEvent, toTradeEvent } from './normalize.ts';
import type { Level } from './orderBook.ts';
import type { MarketListing, VenueMarket } from './venue.ts';
import type { CcxtVenue } from './venues/ccxtVenues.ts';

/** Timings a deployment or a test may change. */
export interface CcxtTuning extends SharedTuning {
  /** Markets per subscription where ccxt can watch several at once (…ForSymbols). */
  marketsPerWatcher: number;
  /**
   * How long a book may keep failing its check after a resync began before the collector redials:
   * some ccxt classes resubscribe a bad book themselves, others keep the broken subscription.
   */
  resyncGraceMs: number;
}

export interface CcxtCollectorOptions {
  venue: CcxtVenue;
  bus: Pick<Bus, 'publish'>;
  /** Carries the venue in its bindings. */
  log: Logger;
  tuning?: Partial<CcxtTuning>;
  /** ccxt market structures to use instead of asking the venue's REST API (`exchange.setMarkets`). */
  markets?: readonly Record<string, unknown>[];
  /** Adjusts the exchange before anything connects (tests point its URLs at the simulator). */
  configure?(exchange: Exchange): void;
  /** Catalog asset ids to follow (`ingest --assets`); every mapped market when unset. */
  assets?: ReadonlySet<string>;
}

export type CcxtCollector = Collector<CcxtVenue>;

type Ccxt = typeof import('ccxt');
type Kind = 'trades' | 'books' | 'liquidations';

/** ccxt numbers as plain decimal strings (no exponent), for the exact contract-size product. */
const decimalText = (exchange: Exchange, n: number) => exchange.numberToString(n) as string;

/**
 * The markets of the venue's kind ccxt lists: spot pairs, or linear perpetual swaps whose contract
 * size ccxt knows (inverse contracts count in quote currency, not base units). `symbol` is the
 * venue's own id; `unified` maps it back to ccxt's symbol.
 */
function ccxtListings(venue: Pick<CcxtVenue, 'contract'>, markets: readonly Market[], exchange: Exchange): { listing: MarketListing; unified: string }[] {
  const out: { listing: MarketListing; unified: string }[] = [];
  for (const m of markets) {
    if (!m || m.active === false || !m.id || !m.base || !m.quote) continue;
    const wanted = venue.contract === 'spot' ? m.spot === true : m.swap === true && m.linear === true && m.inverse !== true;
    if (!wanted) continue;
    let contractSize = '1';
    if (venue.contract === 'perpetual') {
      if (typeof m.contractSize !== 'number' || !(m.contractSize > 0)) continue;
      contractSize = decimalText(exchange, m.contractSize);
    }
    out.push({ listing: { symbol: m.id, base: m.base, quote: m.quote, contractSize }, unified: m.symbol });
  }
  return out;
}

/** Bounded memory of recent ids per market: a resubscription that replays trades publishes nothing twice. */
class RecentIds {
  readonly #byMarket = new Map<string, Set<string>>();
  readonly #limit: number;
  constructor(limit: number) {
    this.#limit = limit;
  }
  /** True the first time `id` is seen for `market` (among the last `limit`). */
  add(market: string, id: string): boolean {
    let ids = this.#byMarket.get(market);
    if (!ids) this.#byMarket.set(market, (ids = new Set()));
    if (ids.has(id)) return false;
    ids.add(id);
    if (ids.size > this.#limit) ids.delete(ids.values().next().value!);
    return true;
  }
}

/** The market of a ccxt order book (what a book watcher is settled with), else undefined. */
function bookSymbol(result: unknown): string | undefined {
  if (!result || typeof result !== 'object') return undefined;
  const { bids, asks, symbol } = result as Partial<CcxtOrderBook>;
  return Array.isArray(bids) && Array.isArray(asks) && typeof symbol === 'string' ? symbol : undefined;
}

/** Text frames that are keep-alives, not data (ccxt handles them). */
const keepAliveText = /^(ping|pong)$/i;

export async function startCcxtCollector(options: CcxtCollectorOptions): Promise<CcxtCollector> {
  const { venue, bus, log } = options;
  const tuning: CcxtTuning = {
    ...sharedTuningDefaults,
    marketsPerWatcher: 10,
    resyncGraceMs: 2_000,
    ...options.tuning,
  };
  // ccxt takes about a second to load: only processes that run a ccxt venue pay for it.
  const ccxt: Ccxt = await import('ccxt');
  const Exchange = (ccxt.pro as unknown as Record<string, new (config: object) => Exchange>)[venue.ccxt];
  if (!Exchange) throw new Error(`ccxt ${ccxt.version} has no websocket exchange ${venue.ccxt}`);
  const exchange = new Exchange({
    enableRateLimit: true,
    // Our loops own the retry policy; ccxt's own redial delay would stack on top of it.
    options: { ws: { backoff: { base: 0 } } },
  });

  const counters = { messages: 0, trades: 0, liquidations: 0, reconnects: 0, resyncs: 0, unknownMessages: 0, venueErrors: 0 };
  const timely = eventTimeCheck(log);
  let lastMessageAt: number | undefined;
  let markets: VenueMarket[] = [];
  let unmapped: string[] = [];
  /** The markets followed, by the unified symbol ccxt knows them by. */
  const byUnified = new Map<string, VenueMarket>();
  /** Trades and liquidations already handled: ccxt hands the same objects back until its caches drop them. */
  const seenObjects = new WeakSet<object>();
  // Replays after a resubscription are a venue's recent trades (tens, at most ccxt's 1,000-item cache).
  const recentTradeIds = new RecentIds(1_000);
  const recentLiquidationIds = new RecentIds(200);
  /**
   * When ccxt last settled a watcher with each market's book: it does so only for a book that passed
   * the venue's checks, so these are the books in sync; a failed check or a lost socket removes one.
   */
  const bookResolvedAt = new Map<string, number>();
  /** Book resyncs: when each began, and the markets whose book has not come back since. */
  const resyncStartedAt = new Map<string, number>();
  const resyncing = new Set<string>();

  // Hooks on the exchange instance, set before any socket exists (ccxt binds them per connection).
  const dialed = new Set<string>();
  const guarded = new WeakSet<object>();
  const closeReasons = new Map<string, string>();
  /** Sockets the collector itself closes, and why. */
  const closingByUs = new Map<string, string>();
  const openClient = exchange.client.bind(exchange);
  exchange.client = (url) => {
    if (url && !(exchange.clients && url in exchange.clients)) {
      if (dialed.has(url)) {
        counters.reconnects += 1;
        log.warn({ url, reason: closeReasons.get(url) ?? 'unknown' }, 'reconnecting');
      }
      dialed.add(url);
    }
    const client = openClient(url);
    if (!guarded.has(client)) {
      guarded.add(client);
      // ccxt sends throttled subscriptions without awaiting them: one that fires after its socket closed
      // would reject unobserved and end the process. The watcher it belongs to fails on its own.
      const send = client.send.bind(client);
      client.send = (message: unknown) => {
        const sent = send(message);
        sent.catch(() => undefined);
        return sent;
      };
      const reject = client.reject.bind(client);
      client.reject = (error: unknown, messageHash?: string) => {
        if ((error instanceof ccxt.ChecksumError || error instanceof ccxt.InvalidNonce) && !seenObjects.has(error)) {
          seenObjects.add(error);
          onBookBroken(error);
        }
        return reject(error, messageHash);
      };
      const resolve = client.resolve.bind(client);
      client.resolve = (result: unknown, messageHash: string) => {
        const symbol = bookSymbol(result);
        if (symbol !== undefined && byUnified.has(symbol)) {
          bookResolvedAt.set(symbol, Date.now());
          resyncing.delete(symbol);
        }
        return resolve(result, messageHash);
      };
    }
    return client;
  };
  const onError = exchange.onError.bind(exchange);
  exchange.onError = (client: { url: string }, error: Error) => {
    closeReasons.set(client.url, error.message);
    onError(client, error);
  };
  const onClose = exchange.onClose.bind(exchange);
  exchange.onClose = (client: { url: string; error?: Error }, event: { code?: number }) => {
    const ours = closingByUs.get(client.url);
    closingByUs.delete(client.url);
    closeReasons.set(client.url, ours ?? client.error?.message ?? `closed by the venue (code ${event?.code ?? 'none'})`);
    onClose(client, event);
  };
  const handleMessage = exchange.handleMessage.bind(exchange);
  exchange.handleMessage = (client: unknown, message: unknown) => {
    counters.messages += 1;
    lastMessageAt = Date.now();
    // ccxt hands over text it could not decode as JSON unchanged; what is not a keep-alive is noise.
    const undecoded = typeof message === 'string' && !keepAliveText.test(message.trim());
    if (undecoded) counters.unknownMessages += 1;
    try {
      handleMessage(client, message);
    } catch (err) {
      // ccxt's own errors (a bad checksum, a venue error) reach the watchers; a parser tripping over
      // a message it did not expect is an unknown message, and must not reject every watcher.
      if (err instanceof ccxt.BaseError) throw err;
      if (!undecoded) counters.unknownMessages += 1;
      log.debug({ err: (err as Error).message }, 'message ccxt could not handle');
    }
  };
  exchange.log = (...args: unknown[]) => log.debug({ ccxt: args.map(String).join(' ') }, 'ccxt');
  options.configure?.(exchange);
  // Needed for ws:// URLs only (local tests), harmless otherwise.
  await exchange.loadHttpProxyAgent();

  const loops: Promise<void>[] = [];
  const shell = startCollectorShell({
    venueId: venue.id,
    bus,
    log,
    tuning,
    books: bookEvents,
    counts,
    async close() {
      await started;
      await exchange.close();
      await Promise.all(loops);
    },
  });
  const { stopped, wait } = shell;

  /**
   * What ccxt holds for these markets that we have not published yet. ccxt settles a watcher of
   * several markets with the first market that updates; markets updated in the same burst of frames
   * reach only its caches (exchange.trades, exchange.liquidations), so every answer drains the caches
   * of all the watcher's markets, newest first back to the first item already seen.
   */
  function unseen<T extends object>(answer: unknown, caches: readonly unknown[]): T[] {
    const out: T[] = [];
    const take = (item: unknown) => {
      if (item && typeof item === 'object' && !seenObjects.has(item)) {
        seenObjects.add(item);
        out.push(item as T);
      }
    };
    for (const cache of caches) {
      if (!Array.isArray(cache)) continue;
      let from = cache.length;
      while (from > 0 && !seenObjects.has(cache[from - 1] as object)) from--;
      for (let i = from; i < cache.length; i++) take(cache[i]);
    }
    // Classes that keep their items elsewhere still answer with them.
    if (Array.isArray(answer)) answer.forEach(take);
    return out;
  }

  function onTrades(trades: readonly Trade[], receivedAt: number): void {
    const events: TradeEvent[] = [];
    /** Trades without a venue id get one from their content; equal trades in one drain are told apart by position. */
    const sameContent = new Map<string, number>();
    for (const t of trades) {
      const market = byUnified.get(t.symbol ?? '');
      if (!market) continue;
      const ts = Math.floor(t.timestamp ?? receivedAt);
      let tradeId = t.id ?? undefined;
      if (!tradeId) {
        const content = `${ts}-${t.side}-${t.price}-${t.amount}`;
        const n = sameContent.get(content) ?? 0;
        sameContent.set(content, n + 1);
        tradeId = `~${content}-${n}`;
      }
      if (!recentTradeIds.add(market.symbol, tradeId)) continue;
      const side = t.side === 'buy' || t.side === 'sell' ? t.side : undefined;
      const event =
        side && typeof t.price === 'number' && typeof t.amount === 'number'
          ? toTradeEvent(venue.id, market, { kind: 'trade', symbol: market.symbol, tradeId, price: decimalText(exchange, t.price), quantity: decimalText(exchange, t.amount), side, ts }, receivedAt)
          : undefined;
      if (event && timely(event)) events.push(event);
      else counters.unknownMessages += 1;
    }
    counters.trades += events.length;
    if (events.length > 0) bus.publish(events);
  }

  function onLiquidations(liquidations: readonly Liquidation[], receivedAt: number): void {
    const events: LiquidationEvent[] = [];
    for (const l of liquidations) {
      const market = byUnified.get(l.symbol ?? '');
      if (!market || !venue.liquidationSide) continue;
      const ts = Math.floor(l.timestamp ?? receivedAt);
      // ccxt gives no id: these fields identify a liquidation within a market.
      const liquidationId = `${ts}-${l.side}-${l.price}-${l.contracts}`;
      if (!recentLiquidationIds.add(market.symbol, liquidationId)) continue;
      const closed = venue.liquidationSide === 'order' ? { sell: 'long', buy: 'short' } : { buy: 'long', sell: 'short' };
      const positionSide = l.side === 'buy' || l.side === 'sell' ? (closed[l.side] as 'long' | 'short') : undefined;
      const event =
        positionSide && typeof l.price === 'number' && typeof l.contracts === 'number'
          ? toLiquidationEvent(
              venue.id,
              market,
              { kind: 'liquidation', symbol: market.symbol, liquidationId, price: decimalText(exchange, l.price), quantity: decimalText(exchange, l.contracts), positionSide, ts },
              receivedAt,
            )
          : undefined;
      if (event && timely(event)) events.push(event);
      else counters.unknownMessages += 1;
    }
    counters.liquidations += events.length;
    if (events.length > 0) bus.publish(events);
  }

  /** ccxt's liquidation cache: one array (some classes) or one per market. */
  function liquidationCaches(symbols: readonly string[]): unknown[] {
    const held = (exchange as unknown as { liquidations?: unknown }).liquidations;
    if (Array.isArray(held)) return [held];
    return held && typeof held === 'object' ? symbols.map((s) => (held as Record<string, unknown>)[s]) : [];
  }

  /**
   * A book failed the venue's sequence or checksum rule (seen as ccxt rejects its watchers with it:
   * ccxt settles at most the watchers waiting at that moment, so the markets the error names are
   * resynced, whoever caught it). Some ccxt classes resubscribe a bad book themselves, and the next
   * snapshot settles it again; a book still out after `resyncGraceMs` means the class kept the broken
   * subscription, and a new connection brings fresh snapshots (then again, waiting twice as long).
   */
  function onBookBroken(err: Error): void {
    const now = Date.now();
    for (const symbol of byUnified.keys()) {
      if (!err.message.includes(symbol)) continue;
      bookResolvedAt.delete(symbol);
      if (resyncing.has(symbol)) continue;
      resyncing.add(symbol);
      const startedAt = resyncStartedAt.get(symbol);
      // ccxt may report one failure once per bad message: that is still one resync.
      if (startedAt !== undefined && now - startedAt < tuning.resyncGraceMs) continue;
      resyncStartedAt.set(symbol, now);
      counters.resyncs += 1;
      log.warn({ symbol, reason: err.message }, 'book resync');
      void (async () => {
        for (let grace = tuning.resyncGraceMs; ; grace = Math.min(2 * grace, tuning.backoff.maxMs)) {
          await wait(grace);
          if (stopped() || !resyncing.has(symbol)) return;
          log.warn({ symbol }, 'book still out of sync: reconnecting');
          const clients = Object.values(exchange.clients ?? {});
          for (const c of clients) closingByUs.set(c.url, `book of ${symbol} out of sync: a new connection brings fresh snapshots`);
          await Promise.all(clients.map((c) => c.close()));
        }
      })();
    }
  }

  /** The watcher of one kind for some markets: one ccxt call, re-armed forever. */
  async function watchLoop(kind: Kind, symbols: string[]): Promise<void> {
    const many = symbols.length > 1;
    const call = (): Promise<unknown> => {
      switch (kind) {
        case 'trades':
          return many ? exchange.watchTradesForSymbols(symbols) : exchange.watchTrades(symbols[0]!);
        case 'books':
          return many ? exchange.watchOrderBookForSymbols(symbols) : exchange.watchOrderBook(symbols[0]!);
        case 'liquidations':
          return many ? exchange.watchLiquidationsForSymbols(symbols) : exchange.watchLiquidations(symbols[0]!);
      }
    };
    let failures = 0;
    /** The trade watchers say whether their markets stream: an answer after none, or a lost connection. */
    let streaming = false;
    const report = (connected: boolean) => {
      streaming = connected;
      if (kind === 'trades') bus.publish(statusEvents(venue.id, symbols.map((s) => byUnified.get(s)!), connected, Date.now()));
    };
    while (!stopped()) {
      try {
        const answer = await call();
        const receivedAt = Date.now();
        failures = 0;
        if (!streaming) report(true);
        if (kind === 'trades') onTrades(unseen<Trade>(answer, symbols.map((s) => exchange.trades[s])), receivedAt);
        else if (kind === 'liquidations') onLiquidations(unseen<Liquidation>(answer, liquidationCaches(symbols)), receivedAt);
        // Books: the answer only keeps the subscription alive; ccxt's resolutions tell which books are good.
        continue;
      } catch (err) {
        if (stopped() || err instanceof ccxt.ExchangeClosedByUser) return;
        // ccxt's own unsubscription of a bad book settles the old subscription's watcher with this.
        if (err instanceof ccxt.UnsubscribeError) continue;
        if (err instanceof ccxt.AuthenticationError || err instanceof ccxt.NotSupported || err instanceof ccxt.PermissionDenied) {
          counters.venueErrors += 1;
          log.error({ kind, symbols, err: (err as Error).message }, 'watcher cannot run on this venue: stopped');
          return;
        }
        // A book that failed its check: onBookBroken has seen it when ccxt rejected; re-arm at once.
        if (err instanceof ccxt.ChecksumError || err instanceof ccxt.InvalidNonce) continue;
        if (kind === 'books' && err instanceof ccxt.NetworkError) {
          // A lost connection leaves ccxt's books stale (some classes merge the next snapshot into them):
          // they restart from the snapshot of the resubscription.
          for (const s of symbols) {
            bookResolvedAt.delete(s);
            delete exchange.orderbooks[s];
          }
        }
        if (err instanceof ccxt.NetworkError) report(false);
        else {
          counters.venueErrors += 1;
          if (counters.venueErrors <= 20) log.warn({ kind, symbols, err: (err as Error).message }, 'venue error');
        }
        await wait(backoffDelayMs(tuning.backoff, failures++));
      }
    }
  }

  const started = (async () => {
    const listed = options.markets
      ? Object.values(exchange.setMarkets([...options.markets]))
      : // ccxt keeps a failed listing's promise: a retry has to ask for a reload.
        await shell.retrying('market listing', async (failures) => Object.values(await exchange.loadMarkets(failures > 0)));
    if (stopped() || !listed) return;
    const candidates = ccxtListings(venue, listed, exchange);
    ({ markets, unmapped } = selectMarkets(venue, candidates.map((c) => c.listing), options.assets));
    const unifiedById = new Map(candidates.map((c) => [c.listing.symbol, c.unified]));
    for (const market of markets) byUnified.set(unifiedById.get(market.symbol)!, market);
    if (unmapped.length > 0) log.info({ count: unmapped.length, unmapped: unmapped.slice(0, 50) }, 'markets whose base asset is not in the catalog: not collected');
    log.info({ markets: markets.length }, 'markets resolved');
    const symbols = [...byUnified.keys()];
    if (symbols.length === 0) return;
    const has = exchange.has;
    const plan: [Kind, boolean | undefined, boolean | 'emulated' | undefined][] = [
      ['trades', has.watchTradesForSymbols === true, has.watchTrades],
      ['books', has.watchOrderBookForSymbols === true, has.watchOrderBook],
      ['liquidations', has.watchLiquidationsForSymbols === true, has.watchLiquidations === true],
    ];
    for (const [kind, forSymbols, single] of plan) {
      if (!venue.channels.includes(kind)) continue;
      if (forSymbols) for (let i = 0; i < symbols.length; i += tuning.marketsPerWatcher) loops.push(watchLoop(kind, symbols.slice(i, i + tuning.marketsPerWatcher)));
      else if (single) for (const s of symbols) loops.push(watchLoop(kind, [s]));
    }
  })();

  /** The books ccxt last settled a watcher with, cut to `bookDepth`, as events. */
  function bookEvents(): BookEvent[] {
    const events: BookEvent[] = [];
    for (const [unified, receivedAt] of bookResolvedAt) {
      const book = exchange.orderbooks[unified] as CcxtOrderBook | undefined;
      if (!book) continue;
      const market = byUnified.get(unified)!;
      const side = (levels: CcxtOrderBook['bids']): Level[] =>
        levels.slice(0, tuning.bookDepth).map(([p, q]): Level => [p ?? Number.NaN, typeof q === 'number' ? decimalProduct(decimalText(exchange, q), market.contractSize) : Number.NaN]);
      const event = toBookEvent(venue.id, market, { bids: side(book.bids), asks: side(book.asks) }, Math.floor(book.timestamp ?? receivedAt), receivedAt);
      if (event) events.push(event);
    }
    return events;
  }

  function counts(): CollectorCounts {
    const open = [...dialed].filter((url) => exchange.clients?.[url]?.connection?.readyState === 1);
    return {
      connected: dialed.size > 0 && open.length === dialed.size,
      markets: markets.length,
      unmappedMarkets: unmapped.length,
      messages: counters.messages,
      trades: counters.trades,
      liquidations: counters.liquidations,
      reconnects: counters.reconnects,
      rotations: 0,
      resyncs: counters.resyncs,
      // ccxt keeps its books' buffers itself.
      bookBufferOverflows: 0,
      unknownMessages: counters.unknownMessages,
      venueErrors: counters.venueErrors,
      lastMessageAt,
    };
  }

  return {
    venue,
    markets: () => markets,
    unmapped: () => unmapped,
    metrics: shell.metrics,
    ready: () => started,
    stop: shell.stop,
  };
}
