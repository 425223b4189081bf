import { startCcxtCollector } from '../../ingest/ccxtCollector.ts';
import { startCollector } from '../../ingest/collector.ts';
import type { Collector, CollectorMetrics } from '../../ingest/collectorKit.ts';
import { lastStoredTrades, unfinishedGaps } from '../../ingest/lastStoredTrades.ts';
import type { FoundGap } from '../../ingest/tradeGaps.ts';
import { venueEndpoints, type HistoryCursor, type VenueDescriptor, type VenueEndpoints } from '../../ingest/venue.ts';
import type { CcxtVenue } from '../../ingest/venues/ccxtVenues.ts';
import type { Bus } from '../bus/bus.ts';
import type { Config } from '../config.ts';
import type { MarketEvent, TradeEvent } from '../events.ts';
import type { Logger } from '../log.ts';
import type { StoreCalls } from '../store.ts';
import { sampledCounter, sampledGauge } from '../metrics.ts';
import type { RoleContext } from './context.ts';
import { startWorkerThread } from './workerThread.ts';
import { restoreThreadPriority } from './threadPriority.ts';

export interface IngestSelection {
  venues: readonly VenueDescriptor[];
  ccxtVenues: readonly CcxtVenue[];
  assets: ReadonlySet<string> | undefined;
  /** Where a venue is reached instead of its own endpoints (the demo's simulator). */
  endpointsOf?: (venue: VenueDescriptor) => VenueEndpoints | undefined;
  /** Per venue, the last trade the store holds of each market: where recovery starts after a restart. */
  lastStored?: ReadonlyMap<string, ReadonlyMap<string, HistoryCursor>>;
  /** Per venue, gaps a previous run opened and did not end: recovered again at start. */
  unfinishedGaps?: ReadonlyMap<string, readonly FoundGap[]>;
}

/** What the collectors' worker thread (ingestWorker.ts) is started with. */
export interface IngestWorkerData {
  config: Config;
  /** Ids of the native and the ccxt venues to collect. */
  venues: string[];
  ccxtVenues: string[];
  assets: string[] | undefined;
  endpoints: Record<string, VenueEndpoints>;
  /** IngestSelection.lastStored, as plain data: venue -> [market symbol, cursor][]. */
  lastStored: Record<string, [string, HistoryCursor][]> | undefined;
  /** IngestSelection.unfinishedGaps, as plain data. */
  unfinishedGaps: Record<string, FoundGap[]> | undefined;
  /** Readable log lines: the parent's stdout is a terminal (a worker's stdout never is). */
  prettyLog: boolean;
}

/** What the collectors' worker tells its parent, beside its life (workerThread.ts). */
export type IngestWorkerMessage =
  | { type: 'events'; json: string }
  | { type: 'metrics'; collectors: CollectorMetrics[] }
  /** The worker's thread, lowered to `nice` (INGEST_THREAD_NICE): the parent gives it the process's priority back to stop it. */
  | { type: 'priority'; threadId: number; nice: number };
/** What the parent tells the collectors' worker, beside 'stop': trades the bus refused, gaps an earlier run left (watchLateGaps). */
export type IngestParentMessage = { type: 'refused'; json: string } | { type: 'gaps'; venue: string; gaps: FoundGap[] };

/** The running collectors, as the role's other parts reach them. */
export interface RunningIngest {
  /** Gaps an earlier run left open, for this venue's collector to recover (watchLateGaps). */
  resume(venue: string, gaps: FoundGap[]): void;
}

/**
 * Where the collectors' recoveries start after a restart: the last trade `store` holds of each
 * market of the selected venues (none when there is no store to ask: then what was printed while
 * this process was down is not recovered, and the log says so).
 */
export async function readLastStored(
  { config, log }: Pick<RoleContext, 'config' | 'log'>,
  store: StoreCalls | undefined,
  selection: Pick<IngestSelection, 'venues'>,
): Promise<Pick<IngestSelection, 'lastStored' | 'unfinishedGaps'> & { readAt?: number }> {
  if (!store) {
    log.warn('no store to read the last stored trades from (CLICKHOUSE_URL): trades printed while the collectors were down are not recovered');
    return {};
  }
  const withinMs = config.INGEST_RECOVERY_START_HOURS * 3_600_000;
  const readAt = Date.now();
  try {
    const [lastStored, unfinished] = await Promise.all([lastStoredTrades(store, selection.venues, withinMs, readAt), unfinishedGaps(store, selection.venues.map((v) => v.id), withinMs, readAt)]);
    return { lastStored, unfinishedGaps: unfinished, readAt };
  } catch (err) {
    log.warn({ err }, 'the last stored trades could not be read: trades printed while the collectors were down are not recovered');
    return {};
  }
}

/** What the role keeps of a running collector. */
export type RunningCollector = Pick<Collector<unknown>, 'metrics' | 'refused' | 'resume'>;

/** Trades the bus refused go back to their venue's collector, which recovers them where it can. */
export function routeRefused(collectors: readonly RunningCollector[], events: readonly MarketEvent[]): void {
  const trades = Map.groupBy(
    events.filter((e): e is TradeEvent => e.type === 'trade'),
    (t) => t.venue,
  );
  for (const c of collectors) {
    const refused = trades.get(c.metrics().venue);
    if (refused) c.refused?.(refused);
  }
}

/** Gaps an earlier run left go to their venue's collector. */
export function routeGaps(collectors: readonly RunningCollector[], venue: string, gaps: FoundGap[]): void {
  collectors.find((c) => c.metrics().venue === venue)?.resume?.(gaps);
}

/** The ingest role in this thread: one collector per selected venue, publishing to the bus; their metrics and readiness check. */
export async function startIngest(ctx: RoleContext, bus: Bus, selection: IngestSelection): Promise<RunningIngest> {
  const collectors = await startCollectors(ctx, bus, selection);
  const stopRouting = bus.onRefused((events) => routeRefused(collectors, events));
  ctx.life.add('refused trades to their collectors', 'sources', async () => stopRouting());
  observeCollectors(ctx, () => collectors.map((c) => c.metrics()));
  return { resume: (venue, gaps) => routeGaps(collectors, venue, gaps) };
}

/** How often the ingest role reads the store again for gaps an earlier run left open (watchLateGaps). */
export const lateGapsEveryMs = 60_000;

export interface LateGapsOptions {
  venueIds: readonly string[];
  /** How far back a gap is recovered (INGEST_RECOVERY_START_HOURS). */
  withinMs: number;
  /** When the start read the store: gaps opened since are this run's own. */
  readAt: number;
  /** Gaps already handed to the collectors (those the start read). */
  known: Iterable<string>;
  resume(venue: string, gaps: FoundGap[]): void;
  log: Logger;
  everyMs?: number;
}

/**
 * Reads the store again every `everyMs` for gaps an earlier run opened and left open, and hands each
 * one its collectors have not had to them. With the aggregators in other processes (Kafka), a gap
 * and the live trade after it can be stored by two of them, the trade first: a restart that read
 * the store between the two starts its recovery past the gap, and its row comes too late for the
 * start's read. Returns the stop.
 */
export function watchLateGaps(store: StoreCalls, options: LateGapsOptions): () => Promise<void> {
  const known = new Set(options.known);
  let reading: Promise<void> | undefined;
  const read = async () => {
    const found = await unfinishedGaps(store, options.venueIds, options.withinMs, Date.now(), 0, options.readAt);
    for (const [venue, gaps] of found) {
      const late = gaps.filter((g) => !known.has(g.gapId!));
      if (late.length === 0) continue;
      for (const g of late) known.add(g.gapId!);
      options.log.warn({ venue, gaps: late.length, markets: [...new Set(late.map((g) => g.symbol))].slice(0, 10) }, 'gaps of an earlier run reached the store after this start read it: recovering them');
      options.resume(venue, late);
    }
  };
  const timer = setInterval(() => {
    reading ??= read()
      .catch((err: unknown) => options.log.warn({ err }, 'the open gaps of earlier runs could not be read again'))
      .finally(() => (reading = undefined));
  }, options.everyMs ?? lateGapsEveryMs);
  timer.unref();
  return async () => {
    clearInterval(timer);
    await reading;
  };
}

/** Starts watchLateGaps for a role whose start read the store (readLastStored), stopped with the collectors. */
export function startLateGaps(ctx: Pick<RoleContext, 'config' | 'log' | 'life'>, store: StoreCalls, selection: Pick<IngestSelection, 'venues' | 'unfinishedGaps'>, readAt: number, ingest: RunningIngest): void {
  const stop = watchLateGaps(store, {
    venueIds: selection.venues.map((v) => v.id),
    withinMs: ctx.config.INGEST_RECOVERY_START_HOURS * 3_600_000,
    readAt,
    known: [...(selection.unfinishedGaps?.values() ?? [])].flat().map((g) => g.gapId!),
    resume: (venue, gaps) => ingest.resume(venue, gaps),
    log: ctx.log.child({ part: 'late-gaps' }),
  });
  ctx.life.add('late gaps of earlier runs', 'sources', stop);
}

/** Starts the selected collectors; each one's stop (then a flush of the bus) is registered in `ctx.life`. */
export async function startCollectors({ config, log, life }: Pick<RoleContext, 'config' | 'log' | 'life'>, bus: Pick<Bus, 'publish' | 'flush'>, selection: IngestSelection): Promise<RunningCollector[]> {
  const collectors: RunningCollector[] = [];
  const stopThenFlush = (stop: () => Promise<void>) => async () => {
    await stop();
    await bus.flush();
  };
  for (const venue of selection.venues) {
    const endpoints = selection.endpointsOf?.(venue) ?? venueEndpoints(venue);
    const lastStored = selection.lastStored?.get(venue.id);
    const unfinishedGaps = selection.unfinishedGaps?.get(venue.id);
    const collector = await startCollector({
      venue,
      endpoints,
      bus,
      log,
      assets: selection.assets,
      discover: config.INGEST_DISCOVER,
      tuning: { marketsRefreshMs: config.INGEST_MARKETS_REFRESH_MIN * 60_000 },
      ...(lastStored ? { lastStored } : {}),
      ...(unfinishedGaps ? { unfinishedGaps } : {}),
    });
    collectors.push(collector);
    life.add(`collector:${venue.id}`, 'sources', stopThenFlush(() => collector.stop()));
  }
  for (const venue of selection.ccxtVenues) {
    const collector = await startCcxtCollector({
      venue,
      bus,
      log: log.child({ venue: venue.id }),
      assets: selection.assets,
      discover: config.INGEST_DISCOVER,
      tuning: { marketsRefreshMs: config.INGEST_MARKETS_REFRESH_MIN * 60_000 },
    });
    collectors.push(collector);
    life.add(`collector:${venue.id}`, 'sources', stopThenFlush(() => collector.stop()));
  }
  return collectors;
}

/**
 * The ingest role in a worker thread (`ingestWorker.ts`), for a process that also serves the API:
 * parsing frames and keeping books would otherwise hold the API's event loop. The worker posts the
 * collectors' events in batches, published here to `bus`, and their metrics every second. Stopping
 * stops the collectors and waits for their last events before the bus is stopped.
 */
export async function startIngestWorker(ctx: RoleContext, bus: Bus, selection: IngestSelection): Promise<RunningIngest> {
  const { config } = ctx;
  const data: IngestWorkerData = {
    config,
    venues: selection.venues.map((v) => v.id),
    ccxtVenues: selection.ccxtVenues.map((v) => v.id),
    assets: selection.assets && [...selection.assets],
    // Resolved here: the demo's simulator, and the environment's overrides, live in this thread.
    endpoints: Object.fromEntries(selection.venues.map((v) => [v.id, selection.endpointsOf?.(v) ?? venueEndpoints(v)])),
    lastStored: selection.lastStored && Object.fromEntries([...selection.lastStored].map(([venue, markets]) => [venue, [...markets]])),
    unfinishedGaps: selection.unfinishedGaps && Object.fromEntries([...selection.unfinishedGaps].map(([venue, gaps]) => [venue, [...gaps]])),
    prettyLog: process.stdout.isTTY === true,
  };
  let collectors: CollectorMetrics[] = [];
  let receivedAt = Date.now();
  let lowered: { threadId: number; nice: number } | undefined;
  // As the stop begins (with the API, before the collectors' turn): a thread at a low priority on a
  // busy machine read its stop message 4 s after it was sent and took 7 s in all (the 2,000-asset demo).
  ctx.life.add("collectors' thread priority", 'front', async () => {
    if (lowered) ctx.log.debug({ from: lowered.nice, to: restoreThreadPriority(lowered.threadId) }, "the collectors' thread stops at the process's priority");
  });
  const worker = await startWorkerThread<IngestWorkerMessage>(ctx, 'ingest', 'sources', new URL('./ingestWorker.ts', import.meta.url), data, (message) => {
    switch (message.type) {
      case 'priority':
        lowered = { threadId: message.threadId, nice: message.nice };
        return;
      case 'events':
        bus.publish(JSON.parse(message.json) as MarketEvent[]);
        return;
      case 'metrics':
        collectors = message.collectors;
        receivedAt = Date.now();
        return;
    }
  });
  // The worker's collectors recover what the bus refused of their trades.
  const stopRouting = bus.onRefused((events) => {
    const trades = events.filter((e) => e.type === 'trade');
    if (trades.length > 0) worker.postMessage({ type: 'refused', json: JSON.stringify(trades) } satisfies IngestParentMessage);
  });
  ctx.life.add('refused trades to the collectors worker', 'sources', async () => stopRouting());
  // The last report, its ages brought up to now.
  observeCollectors(ctx, () => collectors.map((m) => (m.lastMessageAgeMs === undefined ? m : { ...m, lastMessageAgeMs: m.lastMessageAgeMs + Date.now() - receivedAt })));
  return { resume: (venue, gaps) => worker.postMessage({ type: 'gaps', venue, gaps } satisfies IngestParentMessage) };
}

/** Per venue, what its collector says of itself, read at every scrape; the readiness check on their connections. */
export function observeCollectors({ metrics, checks }: Pick<RoleContext, 'metrics' | 'checks'>, read: () => CollectorMetrics[]): void {
  checks.push({
    name: 'collectors',
    check: () => {
      const all = read();
      const disconnected = all.filter((m) => !m.connected).map((m) => m.venue);
      const connected = all.length - disconnected.length;
      return { ok: connected > 0, ...(connected === 0 ? { reason: 'no venue connected' } : {}), connected, disconnected };
    },
  });
  const per = (pick: (m: CollectorMetrics) => number | undefined) => () =>
    read().flatMap((m) => {
      const value = pick(m);
      return value === undefined ? [] : [{ labels: { venue: m.venue }, value }];
    });
  const venue = ['venue'] as const;
  sampledGauge(metrics, { name: 'mds_venue_connected', help: '1 while every socket of the venue is connected.', labelNames: venue, read: per((m) => (m.connected ? 1 : 0)) });
  sampledGauge(metrics, { name: 'mds_venue_markets', help: 'Markets followed.', labelNames: venue, read: per((m) => m.markets) });
  sampledCounter(metrics, { name: 'mds_venue_messages_total', help: 'Messages received.', labelNames: venue, read: per((m) => m.messages) });
  sampledCounter(metrics, { name: 'mds_venue_trades_total', help: 'Trades published.', labelNames: venue, read: per((m) => m.trades) });
  sampledCounter(metrics, { name: 'mds_venue_liquidations_total', help: 'Liquidations published.', labelNames: venue, read: per((m) => m.liquidations) });
  sampledCounter(metrics, { name: 'mds_venue_reconnects_total', help: 'Reconnections after a drop, a stall or a failure.', labelNames: venue, read: per((m) => m.reconnects) });
  sampledCounter(metrics, { name: 'mds_venue_resyncs_total', help: 'Books dropped and fetched again after a gap or a bad checksum.', labelNames: venue, read: per((m) => m.resyncs) });
  sampledCounter(metrics, { name: 'mds_venue_book_buffer_overflows_total', help: "Book update buffers started over at their bound while a REST snapshot was awaited: the venue's snapshots are behind its stream.", labelNames: venue, read: per((m) => m.bookBufferOverflows) });
  sampledCounter(metrics, { name: 'mds_venue_unknown_messages_total', help: 'Messages no parser rule recognised.', labelNames: venue, read: per((m) => m.unknownMessages) });
  sampledCounter(metrics, { name: 'mds_venue_recovered_trades_total', help: "Trades recovered from the venue's REST history after a gap (a skipped trade number, a socket down, a restart).", labelNames: venue, read: per((m) => m.recoveredTrades) });
  sampledGauge(metrics, { name: 'mds_venue_gaps_pending', help: 'Gaps of missed trades waiting for or under recovery.', labelNames: venue, read: per((m) => m.gapsPending) });
  sampledCounter(metrics, {
    name: 'mds_venue_gaps_total',
    help: 'Gaps of missed trades ended, by state: recovered (every trade back), partly_recovered, unrecoverable (the trade_gaps table says why).',
    labelNames: ['venue', 'state'],
    read: () =>
      read().flatMap((m) => [
        { labels: { venue: m.venue, state: 'recovered' }, value: m.gapsRecovered },
        { labels: { venue: m.venue, state: 'partly_recovered' }, value: m.gapsPartlyRecovered },
        { labels: { venue: m.venue, state: 'unrecoverable' }, value: m.gapsUnrecoverable },
      ]),
  });
  sampledGauge(metrics, { name: 'mds_venue_last_message_age_seconds', help: 'Seconds since the venue last sent anything.', labelNames: venue, read: per((m) => (m.lastMessageAgeMs === undefined ? undefined : m.lastMessageAgeMs / 1000)) });
}
