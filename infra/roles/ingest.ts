import { startCcxtCollector } from '../../ingest/ccxtCollector.ts';
import { startCollector } from '../../ingest/collector.ts';
import type { CollectorMetrics } from '../../ingest/collectorKit.ts';
import { venueEndpoints, type VenueDescriptor, type VenueEndpoints } from '../../ingest/venue.ts';
import type { CcxtVenue } from '../../ingest/venues/ccxtVenues.ts';
import type { Bus } from '../bus/bus.ts';
import { sampledCounter, sampledGauge, type Metrics } from '../metrics.ts';
import type { RoleContext } from './context.ts';

export interface IngestSelection {
  venues: readonly VenueDescriptor[];
  ccxtVenues: readonly CcxtVenue[];
  assets: ReadonlySet<string> | undefined;
  /** Where a venue is reached instead of its own endpoints (the demo's simulator). */
  endpointsOf?: (venue: VenueDescriptor) => VenueEndpoints | undefined;
}

/** The ingest role: one collector per selected venue, publishing to the bus; their metrics and readiness check. */
export async function startIngest(ctx: RoleContext, bus: Bus, selection: IngestSelection): Promise<void> {
  const { config, log, life, metrics, checks } = ctx;
  const collectors: { metrics(): CollectorMetrics }[] = [];
  const stopThenFlush = (stop: () => Promise<void>) => async () => {
    await stop();
    await bus.flush();
  };
  for (const venue of selection.venues) {
    const endpoints = selection.endpointsOf?.(venue) ?? venueEndpoints(venue);
    const collector = await startCollector({ venue, endpoints, bus, log, assets: selection.assets, tuning: { marketsRefreshMs: config.INGEST_MARKETS_REFRESH_MIN * 60_000 } });
    collectors.push(collector);
    life.add(`collector:${venue.id}`, stopThenFlush(() => collector.stop()));
  }
  for (const venue of selection.ccxtVenues) {
    const collector = await startCcxtCollector({ venue, bus, log: log.child({ venue: venue.id }), assets: selection.assets });
    collectors.push(collector);
    life.add(`collector:${venue.id}`, stopThenFlush(() => collector.stop()));
  }
  observeCollectors(metrics, collectors);
  checks.push({
    name: 'collectors',
    check: () => {
      const all = collectors.map((c) => c.metrics());
      const disconnected = all.filter((m) => !m.connected).map((m) => m.venue);
      const connected = all.length - disconnected.length;
      return { ok: connected > 0, ...(connected === 0 ? { reason: 'no venue connected' } : {}), connected, disconnected };
    },
  });
}

/** Per venue, what its collector says of itself, read at every scrape. */
function observeCollectors(metrics: Metrics, collectors: readonly { metrics(): CollectorMetrics }[]): void {
  const per = (read: (m: CollectorMetrics) => number | undefined) => () =>
    collectors.flatMap((c) => {
      const m = c.metrics();
      const value = read(m);
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
  sampledCounter(metrics, { name: 'mds_venue_unknown_messages_total', help: 'Messages no parser rule recognised.', labelNames: venue, read: per((m) => m.unknownMessages) });
  sampledGauge(metrics, { name: 'mds_venue_last_message_age_seconds', help: 'Seconds since the venue last sent anything.', labelNames: venue, read: per((m) => (m.lastMessageAgeMs === undefined ? undefined : m.lastMessageAgeMs / 1000)) });
}
