import type { TradeEvent } from '../infra/events.ts';
import { startDedupingSink, type DedupedTable, type DedupingSink, type DedupingSinkOptions } from './dedupingSink.ts';
import { startGapSink } from './gapSink.ts';

/** A row of the `trades` table (infra/SCHEMA.md), times in unix ms. */
export interface TradeRow {
  venue: string;
  market: string;
  asset: string;
  quote: string;
  trade_id: string;
  ts: number;
  received_at: number;
  price: number;
  quantity: number;
  side: 'buy' | 'sell';
}

/** A trade as its `trades` row. */
export const tradeRow = (e: TradeEvent): TradeRow => ({
  venue: e.venue,
  market: e.market,
  asset: e.asset,
  quote: e.quote,
  trade_id: e.tradeId,
  ts: e.ts,
  received_at: e.receivedAt,
  price: e.price,
  quantity: e.quantity,
  side: e.side,
});

/** `trades` rows; the lookup is narrowed by asset, the leading column of the table's sort key. */
const tradesTable: DedupedTable<'trades'> = {
  topic: 'trades',
  table: 'trades',
  group: 'aggregate-trades',
  idColumn: 'trade_id',
  idOf: (e) => e.tradeId,
  scopeColumn: 'asset',
  row: tradeRow,
};

/**
 * Consumes `trades` and writes them to ClickHouse exactly once per venue + market + trade id,
 * committing bus positions only after the insert: a replay after a crash adds nothing to
 * `trades` nor to the candles and index prices the materialized views derive from it.
 */
export function startTradeSink(options: DedupingSinkOptions): Promise<DedupingSink> {
  return startDedupingSink(tradesTable, options);
}

/**
 * The gap sink and the trade sink, every insert of trades preceded by one of the gaps buffered: a
 * collector publishes a gap before the live trade that found it, and a trade stored without its gap
 * would, after a crash, start the restart's recovery past the gap (its trades lost without a trace).
 */
export async function startGapAndTradeSinks(gapOptions: DedupingSinkOptions, tradeOptions: DedupingSinkOptions): Promise<{ gaps: DedupingSink; trades: DedupingSink }> {
  const gaps = await startGapSink(gapOptions);
  const trades = await startTradeSink({ ...tradeOptions, storeFirst: () => gaps.storeBuffered() });
  return { gaps, trades };
}
