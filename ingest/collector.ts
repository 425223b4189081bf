import type { Bus } from '../infra/bus/bus.ts';
import type { BookEvent, MarketEvent } from '../infra/events.ts';
import type { Logger } from '../infra/log.ts';
import { BookSync, ConnectionSequence } from './bookSync.ts';
import { startCollectorShell, sharedTuningDefaults, type Collector, type CollectorCounts, type SharedTuning } from './collectorKit.ts';
import { VenueConnection } from './connection.ts';
import { eventTimeCheck, selectMarkets, statusEvents, toBookEvent, toLevels, toLiquidationEvent, toTradeEvent } from './normalize.ts';
import { unknown, type KeepAlive, type MarketListing, type SocketPlan, type VenueDescriptor, type VenueEndpoints, type VenueMarket, type VenueMessage, type VenueSession } from './venue.ts';
import { venueIo } from './venueIo.ts';

/** Timings a deployment or a test may change; defaults come from the venue's descriptor. */
export interface CollectorTuning extends SharedTuning {
  keepAlive: KeepAlive;
  /** Planned rotation; default 95 % of the venue's connection lifetime, none when it has no limit. */
  rotateAfterMs: number | undefined;
  overlapMs: number;
  /** REST snapshots fetched at once (each costs request weight at the venue). */
  snapshotConcurrency: number;
  /** How often the venue's markets are listed again, to follow new listings and drop delisted ones (ms). */
  marketsRefreshMs: number;
}

export interface CollectorOptions {
  venue: VenueDescriptor;
  endpoints: VenueEndpoints;
  bus: Pick<Bus, 'publish'>;
  /** The collector adds the venue to its bindings: every line it logs names the venue. */
  log: Logger;
  tuning?: Partial<CollectorTuning>;
  /** Catalog asset ids to follow (`ingest --assets`); every mapped market when unset. */
  assets?: ReadonlySet<string>;
}

/** One socket of the collector and what it has told us. */
interface SocketState {
  plan: SocketPlan;
  connection: VenueConnection;
  /** Book messages count only from the newest socket: a replaced socket's book stream is over. */
  bookGeneration: number;
  /** The connection-wide sequence of the newest socket, for venues that number their messages. */
  sequence: ConnectionSequence;
  /** Venues with sessions: one per socket generation still open (two while a rotation overlaps). */
  sessions: Map<number, VenueSession>;
}

/** Snapshot requests for a market are not repeated sooner than this while the first is unanswered. */
const resubscribeEveryMs = 10_000;

/**
 * A venue collector driven by the venue's descriptor: resolves the markets, opens the sockets the
 * venue's plan asks for, keeps each market's book by the venue's rule, and publishes trades and
 * liquidations as they come and book tops every `bookEveryMs`.
 */
export async function startCollector(options: CollectorOptions): Promise<Collector> {
  const { venue, endpoints, bus } = options;
  const log = options.log.child({ venue: venue.id });
  const tuning: CollectorTuning = {
    ...sharedTuningDefaults,
    keepAlive: venue.keepAlive,
    rotateAfterMs: venue.maxConnectionMs ? Math.floor(venue.maxConnectionMs * 0.95) : undefined,
    overlapMs: 5_000,
    snapshotConcurrency: 4,
    marketsRefreshMs: 60 * 60_000,
    ...options.tuning,
  };
  const counters = { trades: 0, liquidations: 0, unknownMessages: 0, venueErrors: 0 };
  const timely = eventTimeCheck(log);

  let markets: VenueMarket[] = [];
  let unmapped: string[] = [];
  const bySymbol = new Map<string, VenueMarket>();
  const books = new Map<string, BookSync>();
  /** Venue time and receive time of the last book message applied, per market. */
  const bookTimes = new Map<string, { ts: number; receivedAt: number }>();
  const sockets: SocketState[] = [];
  const resubscribedAt = new Map<string, number>();
  /** Trade and liquidation keys seen while a rotation overlaps two sockets. */
  const seenDuringOverlap = new Set<string>();

  const fetching = new Set<string>();
  const snapshotQueue: string[] = [];
  const restSnapshot = venue.book.restSnapshot;

  async function fetchSnapshot(symbol: string): Promise<void> {
    const sync = books.get(symbol)!;
    try {
      const json = await venueIo.getJson(restSnapshot!.url(endpoints.rest, symbol));
      const outcome = sync.onRestSnapshot(restSnapshot!.parse(json));
      if (outcome === 'gap' || outcome === 'checksum') log.warn({ symbol, reason: outcome }, 'book resync');
      else if (outcome !== 'synced') log.debug({ symbol, outcome }, 'book snapshot not usable yet');
    } catch (err) {
      log.warn({ symbol, err: (err as Error).message }, 'book snapshot failed');
      await new Promise((r) => setTimeout(r, 1_000));
    } finally {
      fetching.delete(symbol);
      pumpSnapshots();
    }
  }

  function pumpSnapshots(): void {
    while (!shell.stopped() && fetching.size < tuning.snapshotConcurrency && snapshotQueue.length > 0) {
      const symbol = snapshotQueue.shift()!;
      // A market delisted since it was queued has no book any more.
      if (!books.get(symbol)?.wantsRestSnapshot) continue;
      fetching.add(symbol);
      void fetchSnapshot(symbol);
    }
  }

  /** Asks the venue for a fresh book of these markets: a REST snapshot, or a resubscription. */
  function requestSnapshots(state: SocketState, symbols: readonly string[]): void {
    if (restSnapshot) {
      for (const symbol of symbols) {
        if (!books.get(symbol)?.wantsRestSnapshot || fetching.has(symbol) || snapshotQueue.includes(symbol)) continue;
        snapshotQueue.push(symbol);
      }
      pumpSnapshots();
      return;
    }
    const now = Date.now();
    const due = symbols.filter((s) => now - (resubscribedAt.get(s) ?? 0) >= resubscribeEveryMs);
    const session = state.sessions.get(state.connection.generation);
    const resubscribe = session?.resubscribe ? (s: readonly string[]) => session.resubscribe!(s) : venue.book.resubscribe;
    if (due.length === 0 || !resubscribe) return;
    for (const s of due) resubscribedAt.set(s, now);
    state.connection.send(resubscribe(due));
  }

  function onBook(state: SocketState, m: Extract<VenueMessage, { kind: 'book' }>, receivedAt: number): void {
    const sync = books.get(m.symbol);
    if (!sync) return;
    const outcome = sync.onMessage(m);
    switch (outcome) {
      case 'snapshot':
        resubscribedAt.delete(m.symbol);
        bookTimes.set(m.symbol, { ts: m.ts ?? receivedAt, receivedAt });
        return;
      case 'applied':
        bookTimes.set(m.symbol, { ts: m.ts ?? receivedAt, receivedAt });
        return;
      case 'gap':
      case 'checksum':
        log.warn({ symbol: m.symbol, reason: outcome === 'gap' ? 'sequence gap' : 'bad checksum' }, 'book resync');
        requestSnapshots(state, [m.symbol]);
        return;
      case 'overflow':
        log.warn({ symbol: m.symbol, bufferOverflows: sync.bufferOverflows }, 'book buffer full before its snapshot came: started over');
        requestSnapshots(state, [m.symbol]);
        return;
      case 'buffered':
        if (sync.wantsRestSnapshot) requestSnapshots(state, [m.symbol]);
        return;
      case 'ignored':
        // No snapshot yet (it was lost, or asked for long ago): ask again, at most every few seconds.
        requestSnapshots(state, [m.symbol]);
        return;
      case 'stale':
        return;
    }
  }

  function onFrame(state: SocketState, text: string, receivedAt: number, generation: number): void {
    let messages: VenueMessage[];
    try {
      const session = state.sessions.get(generation);
      messages = session ? session.parse(text) : venue.parse(text);
    } catch {
      // Parsers promise not to throw; a venue's surprise must still not stop the collector.
      messages = unknown;
    }
    const overlapping = state.connection.overlapping;
    const events: MarketEvent[] = [];
    const once = (key: string) => {
      if (!overlapping) return true;
      if (seenDuringOverlap.has(key)) return false;
      seenDuringOverlap.add(key);
      return true;
    };
    for (const m of messages) {
      switch (m.kind) {
        case 'trade': {
          const market = bySymbol.get(m.symbol);
          if (!market || !once(`t\u0000${m.symbol}\u0000${m.tradeId}`)) break;
          const event = toTradeEvent(venue.id, market, m, receivedAt);
          if (event && timely(event)) {
            counters.trades += 1;
            events.push(event);
          } else counters.unknownMessages += 1;
          break;
        }
        case 'liquidation': {
          const market = bySymbol.get(m.symbol);
          if (!market || !once(`l\u0000${m.symbol}\u0000${m.liquidationId}`)) break;
          const event = toLiquidationEvent(venue.id, market, m, receivedAt);
          if (event && timely(event)) {
            counters.liquidations += 1;
            events.push(event);
          } else counters.unknownMessages += 1;
          break;
        }
        case 'book':
          if (generation === state.bookGeneration) onBook(state, m, receivedAt);
          break;
        case 'sequence': {
          if (generation !== state.bookGeneration || state.sequence.observe(m.value) === 'ok') break;
          // Any message of this socket may be the lost one: every book it carries is suspect.
          log.warn({ reason: 'connection sequence gap', got: m.value }, 'book resync');
          for (const symbol of state.plan.symbols) books.get(symbol)?.invalidate();
          requestSnapshots(state, state.plan.symbols);
          break;
        }
        case 'control':
          if (m.what === 'error') {
            counters.venueErrors += 1;
            if (counters.venueErrors <= 20) log.warn({ detail: m.detail }, 'venue error');
          } else if (m.what === 'reconnect' && generation === state.connection.generation) {
            state.connection.rotate(`venue request${m.detail ? `: ${m.detail}` : ''}`);
          }
          break;
        case 'unknown':
          counters.unknownMessages += 1;
          // A frame no rule knows (a message version the parser does not know, garbage): always counted
          // (mds_venue_unknown_messages_total), shown once with a sample so the format can be looked at.
          if (counters.unknownMessages === 1) log.warn({ sample: text.slice(0, 300) }, 'unknown message from the venue: counted, not logged again');
          break;
      }
    }
    if (!overlapping && seenDuringOverlap.size > 0 && sockets.every((s) => !s.connection.overlapping)) seenDuringOverlap.clear();
    if (events.length > 0) bus.publish(events);
  }

  function openSocket(plan: SocketPlan): SocketState {
    // The callbacks run only once the socket opens, after `state` exists.
    const connection = new VenueConnection({
      url: plan.url,
      ...(plan.connectUrl ? { resolve: () => plan.connectUrl!(venueIo) } : {}),
      log,
      keepAlive: tuning.keepAlive,
      sendsPerSecond: venue.sendsPerSecond,
      rotateAfterMs: tuning.rotateAfterMs,
      overlapMs: tuning.overlapMs,
      backoff: tuning.backoff,
      subscribeMessages: () => plan.subscribe,
      // Every market of the socket (still followed) shares its fate.
      onStatus(connected) {
        const followed = plan.symbols.flatMap((symbol) => bySymbol.get(symbol) ?? []);
        if (followed.length > 0) bus.publish(statusEvents(venue.id, followed, connected, Date.now()));
      },
      // Updates missed while the socket was down make its books stale.
      onOpen(generation) {
        state.bookGeneration = generation;
        state.sequence.reset();
        if (venue.session) {
          for (const old of state.sessions.keys()) if (old < generation - 1) state.sessions.delete(old);
          state.sessions.set(generation, venue.session());
        }
        // The subscription itself asks for every snapshot.
        const now = Date.now();
        for (const symbol of plan.symbols) {
          books.get(symbol)?.reset();
          resubscribedAt.set(symbol, now);
        }
      },
      onMessage: (text, receivedAt, generation) => onFrame(state, text, receivedAt, generation),
    });
    const state: SocketState = { plan, connection, bookGeneration: 0, sequence: new ConnectionSequence(), sessions: new Map() };
    connection.start();
    return state;
  }

  function follow(m: VenueMarket): void {
    bySymbol.set(m.symbol, m);
    if (venue.channels.includes('books')) books.set(m.symbol, new BookSync(venue.book, m));
  }

  const shell = startCollectorShell({
    venueId: venue.id,
    bus,
    log,
    tuning,
    books: bookEvents,
    counts,
    async close() {
      clearInterval(marketsRefresh);
      await started;
      await refreshing;
      await Promise.all(sockets.map((s) => s.connection.close()));
    },
  });

  // Resolving markets waits for the venue, which may be down: start-up does not wait for it.
  const started = (async () => {
    const listings = await shell.retrying('market listing', () => venue.listMarkets(venueIo, endpoints));
    if (shell.stopped() || !listings) return;
    ({ markets, unmapped } = selectMarkets(venue, listings, options.assets));
    if (unmapped.length > 0) log.info({ count: unmapped.length, unmapped: unmapped.slice(0, 50) }, 'markets whose base asset is not in the catalog: not collected');
    for (const m of markets) follow(m);
    log.info({ markets: markets.length }, 'markets resolved');
    for (const plan of venue.sockets(endpoints, markets)) {
      sockets.push(openSocket(plan));
    }
  })();

  /**
   * Lists the venue's markets again. New markets get sockets of their own (the running ones keep
   * their subscriptions, so nothing already followed is interrupted); delisted ones are dropped
   * from the books and their messages ignored, and a socket left with no followed market is closed.
   */
  async function refreshMarkets(): Promise<void> {
    let listings: MarketListing[];
    try {
      listings = await venue.listMarkets(venueIo, endpoints);
    } catch (err) {
      log.warn({ err: (err as Error).message }, 'market refresh failed: keeping the current markets');
      return;
    }
    if (shell.stopped()) return;
    const next = selectMarkets(venue, listings, options.assets);
    const listed = new Set(next.markets.map((m) => m.symbol));
    const added = next.markets.filter((m) => !bySymbol.has(m.symbol));
    const removed = markets.filter((m) => !listed.has(m.symbol));
    unmapped = next.unmapped;
    if (added.length === 0 && removed.length === 0) {
      log.debug({ markets: markets.length }, 'markets unchanged');
      return;
    }
    for (const m of removed) {
      bySymbol.delete(m.symbol);
      books.delete(m.symbol);
      bookTimes.delete(m.symbol);
    }
    for (const m of added) follow(m);
    markets = [...markets.filter((m) => listed.has(m.symbol)), ...added];
    for (const idle of sockets.filter((s) => s.plan.symbols.every((symbol) => !bySymbol.has(symbol)))) {
      sockets.splice(sockets.indexOf(idle), 1);
      await idle.connection.close();
    }
    // A market listed again while its old socket still carries it needs no second subscription.
    const unsubscribed = added.filter((m) => !sockets.some((s) => s.plan.symbols.includes(m.symbol)));
    if (unsubscribed.length > 0 && !shell.stopped()) for (const plan of venue.sockets(endpoints, unsubscribed)) sockets.push(openSocket(plan));
    log.info({ added: added.map((m) => m.symbol), removed: removed.map((m) => m.symbol), markets: markets.length }, 'markets changed');
  }
  let refreshing: Promise<void> | undefined;
  const marketsRefresh = setInterval(() => {
    if (refreshing) return;
    refreshing = started.then(refreshMarkets).finally(() => (refreshing = undefined));
  }, tuning.marketsRefreshMs);

  /** The synced books, cut to `bookDepth`, as events. */
  function bookEvents(): BookEvent[] {
    const events: BookEvent[] = [];
    for (const [symbol, sync] of books) {
      const times = bookTimes.get(symbol);
      if (!sync.synced || !times) continue;
      const m = bySymbol.get(symbol)!;
      const levels = { bids: toLevels(sync.book.topRaw('bid', tuning.bookDepth), m), asks: toLevels(sync.book.topRaw('ask', tuning.bookDepth), m) };
      const event = toBookEvent(venue.id, m, levels, times.ts, times.receivedAt);
      if (event) events.push(event);
    }
    return events;
  }

  function counts(): CollectorCounts {
    let messages = 0;
    let reconnects = 0;
    let rotations = 0;
    let lastMessageAt: number | undefined;
    for (const s of sockets) {
      const c = s.connection.metrics;
      messages += c.messages;
      reconnects += c.reconnects;
      rotations += c.rotations;
      if (c.lastMessageAt !== undefined && (lastMessageAt === undefined || c.lastMessageAt > lastMessageAt)) lastMessageAt = c.lastMessageAt;
    }
    return {
      connected: sockets.length > 0 && sockets.every((s) => s.connection.metrics.connected),
      markets: markets.length,
      unmappedMarkets: unmapped.length,
      messages,
      trades: counters.trades,
      liquidations: counters.liquidations,
      reconnects,
      rotations,
      resyncs: [...books.values()].reduce((n, s) => n + s.resyncs, 0),
      bookBufferOverflows: [...books.values()].reduce((n, s) => n + s.bufferOverflows, 0),
      unknownMessages: counters.unknownMessages,
      venueErrors: counters.venueErrors,
      lastMessageAt,
    };
  }

  return {
    venue,
    markets: () => markets,
    unmapped: () => unmapped,
    ready: () => started,
    metrics: shell.metrics,
    stop: shell.stop,
  };
}
