import { findVenue } from '../infra/catalog/catalog.ts';
import type { LiquidationEvent } from '../infra/events.ts';
import { startDedupingSink, type DedupedTable, type DedupingSink, type DedupingSinkOptions } from './dedupingSink.ts';

/**
 * Whether a venue's liquidation feed publishes a sample rather than every liquidation (Binance
 * `forceOrder`: the latest per symbol in each second). The venue catalog says so
 * (`liquidationsSampled` in infra/catalog/venues.json, checked against the venue's descriptor,
 * whose `liquidations.rule` says why); a venue not in the catalog is taken as complete.
 */
export function isSampledLiquidationFeed(venue: string): boolean {
  return findVenue(venue)?.liquidationsSampled === true;
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
