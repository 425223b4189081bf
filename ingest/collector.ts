// A native venue's collector, driven by the venue's descriptor, from the parts every collector
// shares: the market set (ingest/marketSet.ts), re-listing (marketsRefresh.ts), the emit path
// (emitPath.ts) and the shell (collectorKit.ts); and the native parts: the sockets (venueSocket.ts)
// and the books (venueBooks.ts, snapshotScheduler.ts). This file wires them and reads the frames.
import type { Bus } from '../infra/bus/bus.ts';
import type { Logger } from '../infra/log.ts';
import { connectBudgetOf } from './connectBudget.ts';
import { recoveryCounts, startCollectorShell, sharedTuningDefaults, type Collector, type CollectorCounts, type SharedTuning } from './collectorKit.ts';
import { EmitPath, RotationDuplicates, type Reported } from './emitPath.ts';
import type { GapReport } from './historyRecovery.ts';
import type { FoundGap } from './tradeGaps.ts';
import { logResolved, MarketSet, type MarketChange } from './marketSet.ts';
import { MarketsRefresh } from './marketsRefresh.ts';
import { MissedTrades } from './missedTrades.ts';
import { statusEvents, toGapEvent } from './normalize.ts';
import type { HistoryCursor, KeepAlive, VenueDescriptor, VenueEndpoints, VenueMarket } from './venue.ts';
import { VenueBooks } from './venueBooks.ts';
import { venueIo } from './venueIo.ts';
import { VenueSocket } from './venueSocket.ts';

/** Timings a deployment or a test may change; defaults come from the venue's descriptor. */
export interface CollectorTuning extends SharedTuning {
  keepAlive: KeepAlive;
  /** Planned rotation; default 95 % of the venue's connection lifetime, none when it has no limit. */
  rotateAfterMs: number | undefined;
  overlapMs: number;
  /** REST snapshots fetched at once (each costs request weight at the venue). */
  snapshotConcurrency: number;
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
  /** Without `assets`, collect the markets of bases the catalog does not map too (INGEST_DISCOVER). */
  discover?: boolean;
  /**
   * The last trade the store holds of each market (by venue symbol): what this process missed while
   * it was not running is recovered from there. Unset: it is not known (no store to ask).
   */
  lastStored?: ReadonlyMap<string, HistoryCursor>;
  /** Gaps of this venue a previous run opened and did not end (read from the store): recovered again. */
  unfinishedGaps?: readonly FoundGap[];
}

/** Counted by the collector itself; connection counts come from the sockets. */
interface NativeCounters {
  trades: number;
  liquidations: number;
  unknownMessages: number;
  venueErrors: number;
}

/** The parts of one native collector, as the functions below share them. */
interface NativeParts {
  venue: VenueDescriptor;
  endpoints: VenueEndpoints;
  bus: Pick<Bus, 'publish'>;
  log: Logger;
  tuning: CollectorTuning;
  counters: NativeCounters;
  markets: MarketSet;
  books: VenueBooks;
  emitPath: EmitPath;
  /** Finds the trades missed (a skipped number, a socket down, a restart) and recovers them from the venue's history. */
  missed: MissedTrades;
  duplicates: RotationDuplicates;
  /** Open (or opening) sockets; re-listing adds and removes some. */
  sockets: VenueSocket[];
}

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
    ...options.tuning,
  };
  const counters: NativeCounters = { trades: 0, liquidations: 0, unknownMessages: 0, venueErrors: 0 };
  const markets = new MarketSet(venue, { assets: options.assets, discover: options.discover });
  const sockets: VenueSocket[] = [];
  const shell = startCollectorShell({
    venueId: venue.id,
    bus,
    log,
    tuning,
    books: () => parts.books.events(tuning.bookDepth),
    counts: () => nativeCounts(parts),
    async close() {
      const refreshed = refresh.stop();
      await started;
      await refreshed;
      await Promise.all(sockets.map((s) => s.close()));
      await missed.close();
    },
  });
  const emitPath = new EmitPath({ venueId: venue.id, bus, log, market: (symbol) => markets.get(symbol), counters, onLiveTrade: (trade) => missed.onLiveTrade(trade) });
  const publishGap = (report: GapReport) => {
    const market = markets.get(report.gap.symbol);
    if (market) bus.publish([toGapEvent(venue.id, market, report, Date.now())]);
  };
  const missed = new MissedTrades({ venue, restBase: endpoints.rest, io: venueIo, emitPath, onGap: publishGap, log, wait: shell.wait, stopped: shell.stopped, ...(options.lastStored ? { lastStored: options.lastStored } : {}) });
  /** Gaps an earlier run left open, of the markets followed (once they are known). */
  const resumeFollowed = (gaps: readonly FoundGap[]) => missed.resume(gaps.filter((g) => markets.has(g.symbol)));
  const parts: NativeParts = {
    venue,
    endpoints,
    bus,
    log,
    tuning,
    counters,
    markets,
    books: new VenueBooks({ venue, endpoints, io: venueIo, log, snapshotConcurrency: tuning.snapshotConcurrency, stopped: shell.stopped }),
    emitPath,
    missed,
    duplicates: new RotationDuplicates(),
    sockets,
  };

  // Resolving markets waits for the venue, which may be down: start-up does not wait for it.
  const started = (async () => {
    const listings = await shell.retrying('market listing', () => venue.listMarkets(venueIo, endpoints));
    if (shell.stopped() || !listings) return;
    const { added } = markets.apply(listings);
    for (const m of added) parts.books.follow(m);
    resumeFollowed(options.unfinishedGaps ?? []);
    logResolved(log, markets);
    openSockets(parts, added);
  })();
  const refresh = new MarketsRefresh({
    everyMs: tuning.marketsRefreshMs,
    started,
    list: () => venue.listMarkets(venueIo, endpoints),
    markets,
    onChange: (change) => onMarketsChanged(parts, change, shell.stopped),
    stopped: shell.stopped,
    log,
  });

  return {
    venue,
    markets: () => markets.markets,
    unmapped: () => markets.unmapped,
    ready: () => started,
    refused: (trades) => missed.refused(trades),
    resume: (gaps) => {
      started.then(() => resumeFollowed(gaps)).catch((err: unknown) => log.error({ err }, 'gaps of an earlier run not resumed'));
    },
    metrics: shell.metrics,
    stop: shell.stop,
  };
}

/** Opens the sockets the venue's plan asks for these markets. */
function openSockets(parts: NativeParts, markets: readonly VenueMarket[]): void {
  const { venue, endpoints, bus, log, tuning } = parts;
  const budget = venue.connectLimit ? connectBudgetOf(venue.connectLimit) : undefined;
  for (const plan of venue.sockets(endpoints, markets)) {
    const socket: VenueSocket = new VenueSocket({
      plan,
      venue,
      io: venueIo,
      log,
      tuning,
      ...(budget ? { budget } : {}),
      // Every market of the socket (still followed) shares its fate.
      onStatus(connected) {
        const followed = plan.symbols.flatMap((symbol) => parts.markets.get(symbol) ?? []);
        if (followed.length > 0) bus.publish(statusEvents(venue.id, followed, connected, Date.now()));
        // Trades printed while it is down are missed: the first trade after it comes back closes their gap.
        if (!connected) parts.missed.interrupted(plan.symbols);
      },
      // The books the socket carries start over from the snapshots its subscription asks for; its
      // markets are watched from now on, even before their first trade.
      onOpen: () => {
        parts.books.restart(plan.symbols);
        parts.missed.watching(plan.symbols);
      },
      onFrame: (text, receivedAt, generation) => readFrame(parts, socket, text, receivedAt, generation),
    });
    parts.sockets.push(socket);
    socket.start();
  }
}

/** Reads one frame: its trades and liquidations go down the emit path together, the rest is handled here. */
function readFrame(parts: NativeParts, socket: VenueSocket, text: string, receivedAt: number, generation: number): void {
  const { books, counters, log, duplicates } = parts;
  // Whether this socket overlaps its replacement as the frame came (a reconnect request in it starts a rotation).
  const overlapping = socket.overlapping;
  const reports: Reported[] = [];
  for (const m of socket.parse(text, generation)) {
    switch (m.kind) {
      case 'trade':
      case 'liquidation':
        parts.missed.streaming(m.symbol);
        reports.push(m);
        break;
      case 'book':
        // The market's stream is back (its gap's quiet clock starts), trades or not.
        parts.missed.streaming(m.symbol);
        if (socket.carriesBooks(generation)) books.onBook(socket, m, receivedAt);
        break;
      case 'sequence':
        if (socket.sequenceHolds(m.value, generation)) break;
        // Any message of this socket may be the lost one: every book it carries is suspect.
        log.warn({ reason: 'connection sequence gap', got: m.value }, 'book resync');
        books.invalidate(socket.plan.symbols, socket);
        break;
      case 'control':
        if (m.what === 'error') {
          counters.venueErrors += 1;
          if (counters.venueErrors <= 20) log.warn({ detail: m.detail }, 'venue error');
        } else if (m.what === 'reconnect') socket.rotateOnRequest(m.detail, generation);
        break;
      case 'unknown':
        counters.unknownMessages += 1;
        // A frame no rule knows (a message version the parser does not know, garbage): always counted
        // (mds_venue_unknown_messages_total), shown once with a sample so the format can be looked at.
        if (counters.unknownMessages === 1) log.warn({ sample: text.slice(0, 300) }, 'unknown message from the venue: counted, not logged again');
        break;
    }
  }
  parts.emitPath.emit(reports, receivedAt, duplicates.during(overlapping));
  duplicates.settle(() => overlapping || parts.sockets.some((s) => s.overlapping));
}

/**
 * What re-listing changed: new markets get sockets of their own (the running ones keep their
 * subscriptions, so nothing already followed is interrupted); delisted ones are published as such,
 * dropped from the books and their messages ignored, and a socket left with no followed market is closed.
 */
async function onMarketsChanged(parts: NativeParts, { added, removed }: MarketChange, stopped: () => boolean): Promise<void> {
  const { books, markets, sockets } = parts;
  // Stored with the market's connection states: a discovered asset all of whose markets left the
  // listing is retired under an id of its own (aggregate/jobs/delistedRetirements.ts).
  if (removed.length > 0) parts.bus.publish(statusEvents(parts.venue.id, removed, false, Date.now(), true));
  for (const m of removed) {
    books.drop(m.symbol);
    parts.missed.forget(m.symbol);
  }
  for (const m of added) books.follow(m);
  for (const idle of sockets.filter((s) => s.plan.symbols.every((symbol) => !markets.has(symbol)))) {
    sockets.splice(sockets.indexOf(idle), 1);
    await idle.close();
  }
  // A market listed again while its old socket still carries it needs no second subscription.
  const unsubscribed = added.filter((m) => !sockets.some((s) => s.plan.symbols.includes(m.symbol)));
  if (unsubscribed.length > 0 && !stopped()) openSockets(parts, unsubscribed);
}

/** The collector's counts: its own, its books', and the sums over its sockets. */
function nativeCounts({ sockets, markets, books, counters, missed }: NativeParts): CollectorCounts {
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
    markets: markets.markets.length,
    unmappedMarkets: markets.unmapped.length,
    messages,
    trades: counters.trades,
    liquidations: counters.liquidations,
    reconnects,
    rotations,
    resyncs: books.resyncs,
    bookBufferOverflows: books.bufferOverflows,
    unknownMessages: counters.unknownMessages,
    venueErrors: counters.venueErrors,
    ...recoveryCounts(missed.stats()),
    lastMessageAt,
  };
}
