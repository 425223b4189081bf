import type { MetricValue } from 'prom-client';
import type { ProcessView } from '../../infra/health.ts';

/**
 * What only the process serving the page knows of itself: its metrics (what its collectors, bus
 * and store count) and its readiness. An API replica without collectors or a bus has none of those
 * metrics; the page then shows what the store says.
 */
export type ProcessStatusSources = ProcessView;

/** A venue as its collector in this process sees it. */
export interface ProcessVenue {
  connected: boolean;
  messagesPerSecond: number | null;
  lastMessageAgeMs: number | null;
  resyncs: number;
  bookBufferOverflows: number;
  reconnects: number;
}

export interface ProcessStatus {
  venues: Map<string, ProcessVenue>;
  /** Rows this process inserted into the store per second, every table; null without a sample to compare with. */
  insertedRowsPerSecond: number | null;
  /** Records not yet committed per consumer group and topic; null when no bus runs here. */
  busLag: { group: string; topic: string; records: number }[] | null;
  checks: { name: string; ok: boolean; reason: string | null }[];
}

/** Rates are taken against a sample about this old... */
const rateWindowMs = 10_000;
/** ...and none at all against one older than this (nobody looked at the page for a while). */
const maxBaseAgeMs = 60_000;

/** Per-second rates of growing counters, between the latest sample and one about `rateWindowMs` older. */
export class CounterRates {
  readonly #samples: { at: number; values: ReadonlyMap<string, number> }[] = [];

  rates(at: number, values: ReadonlyMap<string, number>): Map<string, number> {
    const samples = this.#samples;
    samples.push({ at, values });
    while (samples.length > 2 && at - samples[1]!.at >= rateWindowMs) samples.shift();
    if (at - samples[0]!.at > maxBaseAgeMs) samples.shift();
    const base = samples[0]!;
    const rates = new Map<string, number>();
    if (base.at >= at) return rates;
    for (const [key, value] of values) {
      const before = base.values.get(key);
      // A counter that went down was reset (its collector restarted): no rate until the next sample.
      if (before !== undefined && value >= before) rates.set(key, ((value - before) * 1000) / (at - base.at));
    }
    return rates;
  }
}

type Sample = MetricValue<string>;

/** Reads the process's own metrics and checks; one instance per app, since rates compare with its previous read. */
export class ProcessStatusReader {
  readonly #sources: ProcessStatusSources;
  readonly #messages = new CounterRates();
  readonly #inserted = new CounterRates();

  constructor(sources: ProcessStatusSources) {
    this.#sources = sources;
  }

  async read(now: number): Promise<ProcessStatus> {
    const [verdict, connected, messages, ages, resyncs, overflows, reconnects, inserted, lags] = await Promise.all([
      this.#sources.readiness(),
      this.#values('mds_venue_connected'),
      this.#values('mds_venue_messages_total'),
      this.#values('mds_venue_last_message_age_seconds'),
      this.#values('mds_venue_resyncs_total'),
      this.#values('mds_venue_book_buffer_overflows_total'),
      this.#values('mds_venue_reconnects_total'),
      this.#values('mds_store_inserted_rows_total'),
      this.#sources.metricValues('mds_bus_lag_records'),
    ]);
    const byVenue = (samples: Sample[]) => new Map(samples.map((s) => [String(s.labels.venue), s.value]));
    const messageRates = this.#messages.rates(now, byVenue(messages));
    const ageOf = byVenue(ages);
    const resyncsOf = byVenue(resyncs);
    const overflowsOf = byVenue(overflows);
    const reconnectsOf = byVenue(reconnects);
    const venues = new Map<string, ProcessVenue>();
    for (const [venue, up] of byVenue(connected)) {
      const ageS = ageOf.get(venue);
      venues.set(venue, {
        connected: up === 1,
        messagesPerSecond: messageRates.get(venue) ?? null,
        lastMessageAgeMs: ageS === undefined ? null : Math.round(ageS * 1000),
        resyncs: resyncsOf.get(venue) ?? 0,
        bookBufferOverflows: overflowsOf.get(venue) ?? 0,
        reconnects: reconnectsOf.get(venue) ?? 0,
      });
    }
    const insertedTotal = inserted.reduce((sum, s) => sum + s.value, 0);
    const insertedRate = inserted.length === 0 ? undefined : this.#inserted.rates(now, new Map([['all', insertedTotal]])).get('all');
    return {
      venues,
      insertedRowsPerSecond: insertedRate ?? null,
      // The lag gauge exists wherever a bus runs, even while it has no group yet.
      busLag: lags ? lags.map((s) => ({ group: String(s.labels.group), topic: String(s.labels.topic), records: s.value })) : null,
      checks: Object.entries(verdict.checks).map(([name, r]) => ({ name, ok: r.ok, reason: r.reason ?? null })),
    };
  }

  async #values(name: string): Promise<Sample[]> {
    return (await this.#sources.metricValues(name)) ?? [];
  }
}
