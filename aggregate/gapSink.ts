import type { GapEvent } from '../infra/events.ts';
import { startDedupingSink, type DedupedTable, type DedupingSink, type DedupingSinkOptions } from './dedupingSink.ts';

/** `trade_gaps` rows: one per state of a gap, its identity the gap and the state's version. */
const gapsTable: DedupedTable<'gaps'> = {
  topic: 'gaps',
  table: 'trade_gaps',
  group: 'aggregate-gaps',
  idColumn: 'event_id',
  idOf: (e) => `${e.gapId}/${e.version}`,
  scopeColumn: 'asset',
  row: (e: GapEvent) => ({
    asset: e.asset,
    venue: e.venue,
    market: e.market,
    quote: e.quote,
    gap_id: e.gapId,
    version: e.version,
    event_id: `${e.gapId}/${e.version}`,
    cause: e.cause,
    state: e.state,
    reason: e.reason ?? '',
    from_ts: e.fromTs,
    to_ts: e.toTs,
    from_seq: e.fromSeq ?? null,
    to_seq: e.toSeq ?? null,
    recovered: e.recovered,
    missing: e.missing ?? null,
    absent: e.absent ?? null,
    ts: e.ts,
    received_at: e.receivedAt,
  }),
};

/**
 * Consumes `gaps` (the collectors' word on the trades they missed and recovered) and writes each
 * state of a gap once to `trade_gaps`, committing after the insert.
 */
export function startGapSink(options: DedupingSinkOptions): Promise<DedupingSink> {
  return startDedupingSink(gapsTable, options);
}
