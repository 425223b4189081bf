import type { LiquidationEvent } from '../infra/events.ts';
import { findNativeVenue } from '../ingest/venues/registry.ts';
import { startDedupingSink, type DedupedTable, type DedupingSink, type DedupingSinkOptions } from './dedupingSink.ts';

/**
 * Whether a venue's liquidation feed publishes a sample rather than every liquidation (Binance
 * `forceOrder`: the latest per symbol in each second). The venue's descriptor says so
 * (`liquidations.sampled` in ingest/venues/<venue>.ts), beside the protocol it describes; a venue
 * without a native descriptor is taken as complete.
 */
export function isSampledLiquidationFeed(venue: string): boolean {
  return findNativeVenue(venue)?.liquidations?.sampled === true;
}

/** `liquidations` rows; `value_usd` is computed by the table itself (see its migration). */
function liquidationsTable(isSampled: (venue: string) => boolean): DedupedTable<'liquidations'> {
  return {
    topic: 'liquidations',
    table: 'liquidations',
    group: 'aggregate-liquidations',
    idColumn: 'liquidation_id',
    idOf: (e) => e.liquidationId,
    scopeColumn: 'venue',
    row: (e: LiquidationEvent) => ({
      asset: e.asset,
      venue: e.venue,
      market: e.market,
      quote: e.quote,
      liquidation_id: e.liquidationId,
      ts: e.ts,
      received_at: e.receivedAt,
      price: e.price,
      quantity: e.quantity,
      position_side: e.positionSide,
      sampled: isSampled(e.venue),
    }),
  };
}

/**
 * Consumes `liquidations` and writes them to the `liquidations` table (and, through its view, to
 * `liquidations_1m`), exactly once per venue + market + liquidation id, committing after the insert.
 */
export function startLiquidationSink(
  options: DedupingSinkOptions & { isSampled?: (venue: string) => boolean },
): Promise<DedupingSink> {
  return startDedupingSink(liquidationsTable(options.isSampled ?? isSampledLiquidationFeed), options);
}
