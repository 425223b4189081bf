// The shell every collector runs in, whatever speaks the venue's protocol (ingest/collector.ts for
// native venues, ingest/ccxtCollector.ts for ccxt ones): the shared tuning and its defaults, the
// handle and metrics the ingest role reads, the book-publishing timer, the 10 s rates and the metrics
// log, backoff and retries, and the stop sequence. The other shared parts have files of their own:
// the market set (marketSet.ts), re-listing (marketsRefresh.ts) and the emit path (emitPath.ts).
import { setTimeout as sleep } from 'node:timers/promises';
import type { Bus } from '../infra/bus/bus.ts';
import type { BookEvent, TradeEvent } from '../infra/events.ts';
import type { Logger } from '../infra/log.ts';
import type { HistoryRecoveryStats } from './historyRecovery.ts';
import type { FoundGap } from './tradeGaps.ts';
import type { VenueDescriptor, VenueMarket } from './venue.ts';

/** Timings every collector has; a deployment or a test may change them. */
export interface SharedTuning {
  /** How often each synced book is published (ms). */
  bookEveryMs: number;
  /** Levels per side in the book events. */
  bookDepth: number;
  /** Waits between retries: random up to min(maxMs, baseMs x 2^failures). */
  backoff: { baseMs: number; maxMs: number };
  /** How often the collector logs its metrics (ms). */
  metricsLogEveryMs: number;
  /** How often the venue's markets are listed again, to follow new listings and drop delisted ones (ms). */
  marketsRefreshMs: number;
}

export const sharedTuningDefaults: SharedTuning = {
  bookEveryMs: 1_000,
  bookDepth: 50,
  backoff: { baseMs: 500, maxMs: 30_000 },
  metricsLogEveryMs: 60_000,
  marketsRefreshMs: 60 * 60_000,
};

export interface CollectorMetrics {
  venue: string;
  connected: boolean;
  markets: number;
  /** Listed markets with a followed quote whose base asset is not in the catalog (not collected). */
  unmappedMarkets: number;
  messages: number;
  trades: number;
  liquidations: number;
  reconnects: number;
  rotations: number;
  resyncs: number;
  /** Times a book's updates outgrew their buffer while its REST snapshot was awaited (ingest/bookSync.ts): the snapshots are behind the stream. */
  bookBufferOverflows: number;
  unknownMessages: number;
  /** Error replies from the venue (a refused subscription, an unknown symbol). */
  venueErrors: number;
  /** Trades recovered from the venue's REST history after a gap (ingest/historyRecovery.ts). */
  recoveredTrades: number;
  /** Gaps waiting for or under recovery. */
  gapsPending: number;
  /** Gaps ended, by how: every missing trade back, some, none. */
  gapsRecovered: number;
  gapsPartlyRecovered: number;
  gapsUnrecoverable: number;
  lastMessageAt: number | undefined;
  lastMessageAgeMs: number | undefined;
  /** Over the last 10 s. */
  messagesPerSecond: number;
  tradesPerSecond: number;
}

/** What a collector counts itself; the kit derives the rest of its metrics. */
export type CollectorCounts = Omit<CollectorMetrics, 'venue' | 'lastMessageAgeMs' | 'messagesPerSecond' | 'tradesPerSecond'>;

/** A running collector of one venue: a native descriptor, or a ccxt venue (`Collector<CcxtVenue>`). */
export interface Collector<Venue = VenueDescriptor> {
  readonly venue: Venue;
  /** The venue markets followed (empty until resolved); `symbol` is the venue's own market id. */
  markets(): readonly VenueMarket[];
  /** Venue symbols with a followed quote whose base asset is not in the catalog. */
  unmapped(): readonly string[];
  metrics(): CollectorMetrics;
  /** Resolves once the markets are known and the streams are opening. */
  ready(): Promise<void>;
  /** Trades of this venue the bus refused: the collector recovers them where its venue can (absent: it cannot). */
  refused?(trades: readonly TradeEvent[]): void;
  /** Gaps an earlier run left open, found after the start (absent: no recovery): recovered once the markets are known. */
  resume?(gaps: readonly FoundGap[]): void;
  stop(): Promise<void>;
}

/** What a collector's recovery of missed trades counts (none for a collector without one). */
export function recoveryCounts(stats: HistoryRecoveryStats | undefined): Pick<CollectorCounts, 'recoveredTrades' | 'gapsPending' | 'gapsRecovered' | 'gapsPartlyRecovered' | 'gapsUnrecoverable'> {
  return {
    recoveredTrades: stats?.recoveredTrades ?? 0,
    gapsPending: stats?.pending ?? 0,
    gapsRecovered: stats?.gaps.recovered ?? 0,
    gapsPartlyRecovered: stats?.gaps.partly_recovered ?? 0,
    gapsUnrecoverable: stats?.gaps.unrecoverable ?? 0,
  };
}

/** A jittered exponential backoff delay after `failures` failures in a row; full jitter spreads the reconnects of many collectors after a venue outage. */
export function backoffDelayMs(backoff: SharedTuning['backoff'], failures: number): number {
  return Math.random() * Math.min(backoff.maxMs, backoff.baseMs * 2 ** failures);
}

export interface CollectorShellOptions {
  venueId: string;
  bus: Pick<Bus, 'publish'>;
  /** Carries the venue in its bindings: the kit's lines do not repeat it. */
  log: Logger;
  tuning: SharedTuning;
  /** The books to publish now, every `bookEveryMs`. */
  books(): BookEvent[];
  counts(): CollectorCounts;
  /** The collector's own shutdown (its sockets, loops, pending work), run once the kit's timers are stopped. */
  close(): Promise<void>;
}

export interface CollectorShell {
  /** True once `stop` was called. */
  stopped(): boolean;
  /** Sleeps `ms`, ending early when the collector stops. */
  wait(ms: number): Promise<void>;
  /** Runs `fn` until it succeeds (`failures` so far as argument), with backoff; undefined when the collector stops first. */
  retrying<T>(what: string, fn: (failures: number) => Promise<T>): Promise<T | undefined>;
  metrics(): CollectorMetrics;
  stop(): Promise<void>;
}

/** Starts the shared machinery of one collector: book timer, rate sampler, metrics log. */
export function startCollectorShell(options: CollectorShellOptions): CollectorShell {
  const { venueId, bus, log, tuning } = options;
  const abort = new AbortController();
  const stopped = () => abort.signal.aborted;
  const wait = (ms: number) => sleep(ms, undefined, { signal: abort.signal }).catch(() => undefined);

  async function retrying<T>(what: string, fn: (failures: number) => Promise<T>): Promise<T | undefined> {
    for (let failures = 0; !stopped(); failures++) {
      try {
        return await fn(failures);
      } catch (err) {
        const delay = backoffDelayMs(tuning.backoff, failures);
        log.warn({ err: (err as Error).message, retryInMs: Math.round(delay) }, `${what} failed`);
        await wait(delay);
      }
    }
    return undefined;
  }

  const publishBooks = setInterval(() => {
    const events = options.books();
    if (events.length > 0) bus.publish(events);
  }, tuning.bookEveryMs);

  /** Once-a-second samples of the message and trade counters, for the 10 s rates. */
  const samples: { messages: number; trades: number }[] = [];
  const sampler = setInterval(() => {
    const { messages, trades } = options.counts();
    samples.push({ messages, trades });
    if (samples.length > 11) samples.shift();
  }, 1_000);
  const rate = (pick: (s: { messages: number; trades: number }) => number) => (samples.length > 1 ? (pick(samples.at(-1)!) - pick(samples[0]!)) / (samples.length - 1) : 0);

  /** The metrics without the venue id, which the logger's bindings already carry. */
  function measured(): Omit<CollectorMetrics, 'venue'> {
    const counts = options.counts();
    return {
      ...counts,
      lastMessageAgeMs: counts.lastMessageAt === undefined ? undefined : Date.now() - counts.lastMessageAt,
      messagesPerSecond: rate((s) => s.messages),
      tradesPerSecond: rate((s) => s.trades),
    };
  }
  const metricsLog = setInterval(() => log.info(measured(), 'collector metrics'), tuning.metricsLogEveryMs);

  return {
    stopped,
    wait,
    retrying,
    metrics: () => ({ venue: venueId, ...measured() }),
    async stop() {
      abort.abort();
      clearInterval(publishBooks);
      clearInterval(sampler);
      clearInterval(metricsLog);
      await options.close();
    },
  };
}
