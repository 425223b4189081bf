// The long-tail collector: any ccxt exchange's public websocket feed through ccxt's pro layer
// (https://docs.ccxt.com/#/ccxt.pro.manual). ccxt speaks the venue's protocol and keeps its books;
// this file decides what to watch and re-arms every watcher after each failure (ccxt reconnects and
// resubscribes only when a watcher is called again). The rest are parts: the hooks on the exchange
// (ingest/ccxtExchange.ts), ccxt's structures as reports (ccxtReports.ts), the books (ccxtBooks.ts),
// and what every collector shares: the market set, the emit path and the shell.
import type { Exchange, Liquidation, Market, Trade } from 'ccxt';
import type { Bus } from '../infra/bus/bus.ts';
import type { Logger } from '../infra/log.ts';
import { CcxtBooks } from './ccxtBooks.ts';
import { hookExchange, type Ccxt } from './ccxtExchange.ts';
import { ccxtListings, liquidationCaches, liquidationReports, tradeReports, UnseenItems } from './ccxtReports.ts';
import { backoffDelayMs, recoveryCounts, sharedTuningDefaults, startCollectorShell, type Collector, type CollectorShell, type SharedTuning } from './collectorKit.ts';
import { EmitPath, ReplayDuplicates } from './emitPath.ts';
import { logResolved, MarketSet, type MarketChange } from './marketSet.ts';
import { MarketsRefresh } from './marketsRefresh.ts';
import { statusEvents } from './normalize.ts';
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
  /**
   * ccxt market structures to use instead of asking the venue's REST API (`exchange.setMarkets`): a
   * list, or a function asked at every listing (a test lists and delists markets through it).
   */
  markets?: readonly Record<string, unknown>[] | (() => readonly Record<string, unknown>[]);
  /** Adjusts the exchange before anything connects (tests point its URLs at the simulator). */
  configure?(exchange: Exchange): void;
  /** Catalog asset ids to follow (`ingest --assets`); every mapped market when unset. */
  assets?: ReadonlySet<string>;
  /** Without `assets`, collect the markets of bases the catalog does not map too (INGEST_DISCOVER). */
  discover?: boolean;
}

export type CcxtCollector = Collector<CcxtVenue>;

type Kind = 'trades' | 'books' | 'liquidations';

/** What one watcher needs of its collector. */
interface WatchContext {
  ccxt: Ccxt;
  exchange: Exchange;
  venue: CcxtVenue;
  bus: Pick<Bus, 'publish'>;
  log: Logger;
  tuning: CcxtTuning;
  shell: CollectorShell;
  /** The markets followed, by ccxt's unified symbol: re-listing adds and removes some, and a watcher stops watching a removed one. */
  byUnified: ReadonlyMap<string, VenueMarket>;
  books: CcxtBooks;
  emitPath: EmitPath;
  duplicates: ReplayDuplicates;
  unseen: UnseenItems;
  counters: { venueErrors: number };
}

export async function startCcxtCollector(options: CcxtCollectorOptions): Promise<CcxtCollector> {
  const { venue, bus, log } = options;
  const tuning: CcxtTuning = { ...sharedTuningDefaults, marketsPerWatcher: 10, resyncGraceMs: 2_000, ...options.tuning };
  // ccxt takes about a second to load: only processes that run a ccxt venue pay for it.
  const ccxt: Ccxt = await import('ccxt');
  const Exchange = (ccxt.pro as unknown as Record<string, new (config: object) => Exchange>)[venue.ccxt];
  if (!Exchange) throw new Error(`ccxt ${ccxt.version} has no websocket exchange ${venue.ccxt}`);
  const exchange = new Exchange({
    enableRateLimit: true,
    // Our loops own the retry policy; ccxt's own redial delay would stack on top of it.
    options: { ws: { backoff: { base: 0 } } },
  });

  const counters = { messages: 0, trades: 0, liquidations: 0, reconnects: 0, unknownMessages: 0, venueErrors: 0, lastMessageAt: undefined as number | undefined };
  const markets = new MarketSet(venue, { assets: options.assets, discover: options.discover });
  /** The markets followed, by the unified symbol ccxt knows them by. */
  const byUnified = new Map<string, VenueMarket>();
  const hooked = hookExchange(exchange, {
    ccxt,
    log,
    counters,
    onDial(url, redial) {
      // Where a recovery of the trades missed while the socket was down would start.
      if (!redial) return;
      counters.reconnects += 1;
      log.warn({ url, reason: redial.reason }, 'reconnecting');
    },
    onBookBroken: (error) => books.broken(error),
    onBookSettled: (symbol) => books.settled(symbol),
  });
  options.configure?.(exchange);
  // Needed for ws:// URLs only (local tests), harmless otherwise.
  await exchange.loadHttpProxyAgent();

  /** The watchers running: one that ends (its markets delisted) leaves the set. */
  const loops = new Set<Promise<void>>();
  const shell = startCollectorShell({
    venueId: venue.id,
    bus,
    log,
    tuning,
    books: () => books.events(tuning.bookDepth),
    counts: () => ({
      connected: hooked.connected(),
      markets: markets.markets.length,
      unmappedMarkets: markets.unmapped.length,
      messages: counters.messages,
      trades: counters.trades,
      liquidations: counters.liquidations,
      reconnects: counters.reconnects,
      rotations: 0,
      resyncs: books.resyncs,
      // ccxt keeps its books' buffers itself.
      bookBufferOverflows: 0,
      unknownMessages: counters.unknownMessages,
      venueErrors: counters.venueErrors,
      // ccxt gives no trade history to recover from: a ccxt venue's gaps are not followed.
      ...recoveryCounts(undefined),
      lastMessageAt: counters.lastMessageAt,
    }),
    async close() {
      const refreshed = refresh.stop();
      await started;
      await refreshed;
      await exchange.close();
      await Promise.all(loops);
    },
  });
  const books = new CcxtBooks({
    venueId: venue.id,
    exchange,
    byUnified,
    log,
    resyncGraceMs: tuning.resyncGraceMs,
    maxGraceMs: tuning.backoff.maxMs,
    wait: shell.wait,
    stopped: shell.stopped,
    redial: (reason) => hooked.closeSockets(reason),
  });
  const emitPath = new EmitPath({ venueId: venue.id, bus, log, market: (symbol) => markets.get(symbol), counters });
  const context: WatchContext = { ccxt, exchange, venue, bus, log, tuning, shell, byUnified, books, emitPath, duplicates: new ReplayDuplicates(), unseen: new UnseenItems(), counters };

  /** ccxt's unified symbol of each venue symbol of the last listing. */
  let unifiedOf = new Map<string, string>();
  const listMarkets = async (reload: boolean): Promise<MarketListing[]> => {
    const given = typeof options.markets === 'function' ? options.markets() : options.markets;
    const listed: Market[] = given ? Object.values(exchange.setMarkets([...given])) : Object.values(await exchange.loadMarkets(reload));
    const candidates = ccxtListings(venue, listed, exchange);
    unifiedOf = new Map(candidates.map((c) => [c.listing.symbol, c.unified]));
    return candidates.map((c) => c.listing);
  };
  const follow = (added: readonly VenueMarket[]) => {
    const symbols = added.map((market) => {
      const unified = unifiedOf.get(market.symbol)!;
      byUnified.set(unified, market);
      return unified;
    });
    for (const loop of startWatchers(context, symbols)) {
      loops.add(loop);
      const ended = () => void loops.delete(loop);
      loop.then(ended, ended);
    }
  };

  const started = (async () => {
    // ccxt keeps a failed listing's promise: a retry has to ask for a reload.
    const listings = await shell.retrying('market listing', (failures) => listMarkets(failures > 0));
    if (shell.stopped() || !listings) return;
    const { added } = markets.apply(listings);
    logResolved(log, markets);
    follow(added);
  })();
  const refresh = new MarketsRefresh({
    everyMs: tuning.marketsRefreshMs,
    started,
    list: () => listMarkets(true),
    markets,
    onChange: async (change) => onMarketsChanged({ venue, bus, byUnified, books, follow }, change),
    stopped: shell.stopped,
    log,
  });

  return {
    venue,
    markets: () => markets.markets,
    unmapped: () => markets.unmapped,
    metrics: shell.metrics,
    ready: () => started,
    stop: shell.stop,
  };
}

/**
 * What re-listing changed: delisted markets are published as such (a discovered asset all of whose
 * markets left is retired: aggregate/jobs/delistedRetirements.ts) and leave the map, so their
 * watchers stop watching them; new markets get watchers of their own (the running ones keep theirs).
 */
function onMarketsChanged(
  parts: { venue: CcxtVenue; bus: Pick<Bus, 'publish'>; byUnified: Map<string, VenueMarket>; books: CcxtBooks; follow(added: readonly VenueMarket[]): void },
  { added, removed }: MarketChange,
): void {
  const { venue, bus, byUnified, books } = parts;
  if (removed.length > 0) bus.publish(statusEvents(venue.id, removed, false, Date.now(), true));
  const gone = new Set(removed.map((m) => m.symbol));
  const dropped = [...byUnified].filter(([, market]) => gone.has(market.symbol)).map(([unified]) => unified);
  for (const unified of dropped) byUnified.delete(unified);
  books.drop(dropped);
  parts.follow(added);
}

/** One watcher per kind and group of markets: grouped where ccxt watches several markets at once, else one per market. */
function startWatchers(context: WatchContext, symbols: readonly string[]): Promise<void>[] {
  if (symbols.length === 0) return [];
  const { exchange, venue, tuning } = context;
  const has = exchange.has;
  const plan: [Kind, boolean | undefined, boolean | 'emulated' | undefined][] = [
    ['trades', has.watchTradesForSymbols === true, has.watchTrades],
    ['books', has.watchOrderBookForSymbols === true, has.watchOrderBook],
    ['liquidations', has.watchLiquidationsForSymbols === true, has.watchLiquidations === true],
  ];
  const loops: Promise<void>[] = [];
  for (const [kind, forSymbols, single] of plan) {
    if (!venue.channels.includes(kind)) continue;
    if (forSymbols) for (let i = 0; i < symbols.length; i += tuning.marketsPerWatcher) loops.push(watchLoop(context, kind, symbols.slice(i, i + tuning.marketsPerWatcher)));
    else if (single) for (const s of symbols) loops.push(watchLoop(context, kind, [s]));
  }
  return loops;
}

/** The ccxt call that watches one kind for some markets. */
function watchCall(exchange: Exchange, kind: Kind, symbols: string[]): Promise<unknown> {
  const many = symbols.length > 1;
  switch (kind) {
    case 'trades':
      return many ? exchange.watchTradesForSymbols(symbols) : exchange.watchTrades(symbols[0]!);
    case 'books':
      return many ? exchange.watchOrderBookForSymbols(symbols) : exchange.watchOrderBook(symbols[0]!);
    case 'liquidations':
      return many ? exchange.watchLiquidationsForSymbols(symbols) : exchange.watchLiquidations(symbols[0]!);
  }
}

/**
 * Rejections after which a watcher re-arms rather than backs off as from a failure: ccxt's own
 * unsubscription of a bad book (it settles the old subscription's watcher), and a book that failed
 * its checksum or sequence (the hooks saw it when ccxt rejected, and count the resync).
 */
function rearmedBookError(ccxt: Ccxt, err: unknown): boolean {
  return err instanceof ccxt.UnsubscribeError || err instanceof ccxt.ChecksumError || err instanceof ccxt.InvalidNonce;
}

/** The watcher of one kind for some markets: one ccxt call, re-armed forever. */
async function watchLoop(context: WatchContext, kind: Kind, symbols: string[]): Promise<void> {
  const { ccxt, exchange, venue, bus, log, shell, byUnified, books, emitPath, duplicates, unseen, counters } = context;
  let failures = 0;
  /** Book rejections in a row that re-arm the watcher (rearmedBookError), since its last answer. */
  let rearms = 0;
  /** The trade watchers say whether their markets stream: an answer after none, or a lost connection. */
  let streaming = false;
  const report = (connected: boolean) => {
    streaming = connected;
    if (kind === 'trades') bus.publish(statusEvents(venue.id, symbols.flatMap((s) => byUnified.get(s) ?? []), connected, Date.now()));
  };
  while (!shell.stopped()) {
    // A delisted market is no longer watched (ccxt, listed again, no longer knows it); a watcher left with none ends.
    if (symbols.some((s) => !byUnified.has(s))) symbols = symbols.filter((s) => byUnified.has(s));
    if (symbols.length === 0) return;
    try {
      const answer = await watchCall(exchange, kind, symbols);
      const receivedAt = Date.now();
      failures = 0;
      rearms = 0;
      if (!streaming) report(true);
      if (kind === 'trades') emitPath.emit(tradeReports(exchange, byUnified, unseen.take<Trade>(answer, symbols.map((s) => exchange.trades[s])), receivedAt), receivedAt, duplicates);
      else if (kind === 'liquidations' && venue.liquidationSide) {
        const drained = unseen.take<Liquidation>(answer, liquidationCaches(exchange, symbols));
        emitPath.emit(liquidationReports(exchange, byUnified, venue.liquidationSide, drained, receivedAt), receivedAt, duplicates);
      }
      // Books: the answer only keeps the subscription alive; ccxt's resolutions tell which books are good.
      continue;
    } catch (err) {
      if (shell.stopped() || err instanceof ccxt.ExchangeClosedByUser) return;
      if (rearmedBookError(ccxt, err)) {
        // ccxt can hand the same rejection back at once on every call (Client.future keeps a future
        // it rejected with a stored rejection), until the venue's next message for the book: re-arming
        // without a pause held the thread for good. The first re-arm waits one turn, repeats back off.
        await shell.wait(rearms === 0 ? 0 : backoffDelayMs(context.tuning.backoff, rearms - 1));
        rearms += 1;
        continue;
      }
      if (err instanceof ccxt.AuthenticationError || err instanceof ccxt.NotSupported || err instanceof ccxt.PermissionDenied) {
        counters.venueErrors += 1;
        log.error({ kind, symbols, err: (err as Error).message }, 'watcher cannot run on this venue: stopped');
        return;
      }
      if (kind === 'books' && err instanceof ccxt.NetworkError) books.lost(symbols);
      if (err instanceof ccxt.NetworkError) report(false);
      else {
        counters.venueErrors += 1;
        if (counters.venueErrors <= 20) log.warn({ kind, symbols, err: (err as Error).message }, 'venue error');
      }
      await shell.wait(backoffDelayMs(context.tuning.backoff, failures++));
    }
  }
}
