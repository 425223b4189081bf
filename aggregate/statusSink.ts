import type { StatusEvent } from '../infra/events.ts';
import { startDedupingSink, type DedupedTable, type DedupingSink, type DedupingSinkOptions } from './dedupingSink.ts';

/**
 * `market_connections` rows. A collector publishes at most one status of a market per
 * millisecond, so venue + market + ts is a status's identity; the lookup is narrowed by asset.
 */
const connectionsTable: DedupedTable<'statuses'> = {
  topic: 'statuses',
  table: 'market_connections',
  group: 'aggregate-statuses',
  idColumn: 'ts_ms',
  idOf: (e) => String(e.ts),
  scopeColumn: 'asset',
  row: (e: StatusEvent) => ({
    asset: e.asset,
    venue: e.venue,
    market: e.market,
    quote: e.quote,
    ts: e.ts,
    received_at: e.receivedAt,
    connected: e.connected,
    delisted: e.delisted === true,
    base_name: e.baseName ?? '',
    base_contracts: Object.fromEntries((e.baseContracts ?? []).map((c) => [c.platform, c.address])),
  }),
};

/**
 * Consumes `statuses` (the collectors' connection status of each market) and writes them to
 * `market_connections`, which the index runner reads to exclude a market as `disconnected`;
 * exactly once per venue + market + ts, committing after the insert.
 */
export function startStatusSink(options: DedupingSinkOptions): Promise<DedupingSink> {
  return startDedupingSink(connectionsTable, options);
}
