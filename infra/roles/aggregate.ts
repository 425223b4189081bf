import { Histogram } from 'prom-client';
import { startBookSink } from '../../aggregate/bookSink.ts';
import type { InsertedRange } from '../../aggregate/dedupingSink.ts';
import { indexSettingsFromConfig, startIndexRunner, type IndexRunner, type LoopStep } from '../../aggregate/indexRunner.ts';
import { startLiquidationSink } from '../../aggregate/liquidationSink.ts';
import { startStatusSink } from '../../aggregate/statusSink.ts';
import { startGapAndTradeSinks } from '../../aggregate/tradeSink.ts';
import type { Bus } from '../bus/bus.ts';
import { withinMs } from '../health.ts';
import { sampledCounter, sampledGauge } from '../metrics.ts';
import type { RoleContext } from './context.ts';
import type { RoleStore } from './store.ts';

/** The aggregate role: the sinks and the index runner, their metrics and their readiness checks. Returns the index runner (the store channel tells it of imports). */
export async function startAggregate(ctx: RoleContext, { store, activity }: RoleStore, bus: Bus): Promise<{ index: IndexRunner }> {
  const { config, log, life, metrics, checks } = ctx;
  const stepSeconds = new Histogram({
    name: 'mds_index_step_seconds',
    help: "Time of one step of the index's live loop (its live seconds, any revisit range, its writes), by whether it read the 24-hour windows again (after a start or a go-back, or for trades stored late in them). The lag is INDEX_LAG_MS plus up to a second plus this.",
    labelNames: ['windows'],
    buckets: [0.1, 0.25, 0.5, 0.75, 1, 1.5, 2, 3, 5, 10],
    registers: [metrics.registry],
  });
  const onStep = (step: LoopStep) => stepSeconds.observe({ windows: step.windowsRead ? 'read' : 'kept' }, step.ms / 1000);
  const index = startIndexRunner({ store, log: log.child({ part: 'index' }), ...indexSettingsFromConfig(config), onStep });
  life.add('index', 'consumers', () => index.stop());
  // Rows a sink stores for seconds the index has already passed (a venue's recovery, a backlog after
  // a store outage) are computed again, for the assets they belong to.
  const sinkOptions = {
    bus,
    store,
    batchRows: config.AGGREGATE_BATCH_ROWS,
    batchMs: config.AGGREGATE_BATCH_MS,
    onInserted: (r: InsertedRange) => {
      for (const [asset, ts] of r.firstByAsset) index.noteInserted(ts, asset);
    },
  };
  const { gaps, trades } = await startGapAndTradeSinks({ ...sinkOptions, log: log.child({ part: 'gap-sink' }), onInserted: undefined }, { ...sinkOptions, log: log.child({ part: 'trade-sink' }) });
  life.add('gap-sink', 'consumers', () => gaps.stop());
  life.add('trade-sink', 'consumers', () => trades.stop());
  const statuses = await startStatusSink({ ...sinkOptions, log: log.child({ part: 'status-sink' }) });
  life.add('status-sink', 'consumers', () => statuses.stop());
  const liquidations = await startLiquidationSink({ ...sinkOptions, log: log.child({ part: 'liquidation-sink' }), onInserted: undefined });
  life.add('liquidation-sink', 'consumers', () => liquidations.stop());
  const books = await startBookSink({ bus, store, log: log.child({ part: 'book-sink' }), everyMs: 5_000 });
  life.add('book-sink', 'consumers', () => books.stop());

  const indexLagMs = () => {
    const last = index.stats().lastComputed;
    return last === undefined ? undefined : Date.now() - (last + 1) * 1000;
  };
  const one = (value: number | undefined) => (value === undefined ? [] : [{ labels: {}, value }]);
  sampledGauge(metrics, { name: 'mds_index_lag_seconds', help: 'How far the index is behind now (the end of the last second computed).', labelNames: [], read: () => {
    const lag = indexLagMs();
    return one(lag === undefined ? undefined : lag / 1000);
  } });
  sampledCounter(metrics, { name: 'mds_index_rows_total', help: 'Rows the index runner wrote to index_ticks.', labelNames: [], read: () => one(index.stats().rows) });
  sampledCounter(metrics, {
    name: 'mds_index_phase_seconds_total',
    help: 'Time the index spent computing its seconds, by part: load (reading trades and rates from the store), sweep (computing), write (inserting its rows).',
    labelNames: ['phase'],
    read: () => Object.entries(index.stats().phaseMs).map(([phase, ms]) => ({ labels: { phase }, value: ms / 1000 })),
  });
  sampledCounter(metrics, {
    name: 'mds_index_live_reads_total',
    help: "Live index steps by input (the minute's earlier seconds, the last trades before the minute, the windows before it) and by how they had it: kept from the steps before, rolled from the minute before (at a new minute), or read again.",
    labelNames: ['input', 'how'],
    read: () => Object.entries(index.stats().liveReads).flatMap(([input, reads]) => Object.entries(reads).map(([how, n]) => ({ labels: { input, how }, value: n }))),
  });
  sampledCounter(metrics, {
    name: 'mds_index_live_steps_total',
    help: "Live index steps by their first second: continued from the last step's state and verdicts (only the assets whose inputs change computed), or every asset computed (after a start, a go-back or a revisit).",
    labelNames: ['first_second'],
    read: () => Object.entries(index.stats().liveSteps).map(([how, n]) => ({ labels: { first_second: how === 'continued' ? 'continued' : 'every_asset' }, value: n })),
  });
  sampledCounter(metrics, { name: 'mds_index_overruns_total', help: 'Live index steps that outlasted the rest of their second: the next second was due when they ended (a steady rise: the node cannot compute a second within a second).', labelNames: [], read: () => one(index.stats().overruns) });
  sampledCounter(metrics, { name: 'mds_index_failures_total', help: 'Index steps that failed (retried).', labelNames: [], read: () => one(index.stats().failures) });
  sampledCounter(metrics, { name: 'mds_index_revisits_total', help: 'Times the index went back to compute seconds again for trades stored late (live: at most one per 5 s).', labelNames: [], read: () => one(index.stats().revisits) });
  sampledCounter(metrics, { name: 'mds_sink_duplicates_total', help: 'Events the trade sink dropped because the store already held them.', labelNames: [], read: () => one(trades.stats().duplicates) });
  const sinks = { trades, market_connections: statuses, liquidations, trade_gaps: gaps };
  sampledCounter(metrics, {
    name: 'mds_sink_repeated_inserts_total',
    help: 'Inserts a sink sent again under the token of one whose outcome was unknown: after a failed insert, or a partition taken over from a member that died (its copy, if it lands, is dropped).',
    labelNames: ['table'],
    read: () => Object.entries(sinks).map(([table, sink]) => ({ labels: { table }, value: sink.stats().repeatedInserts })),
  });
  reportCatchUp(ctx, () => index.stats().lastComputed, indexLagMs);
  checks.push({
    name: 'index',
    check: () => {
      const lag = indexLagMs();
      return lag === undefined ? { ok: false, reason: 'no second computed yet' } : withinMs('lagMs', lag, config.READY_MAX_INDEX_LAG_MS, 'the index is behind by');
    },
  });
  checks.push({
    name: 'ingestion',
    check: () => {
      const at = activity.lastInsertAt('trades');
      return at === undefined ? { ok: false, reason: 'no trade inserted yet' } : withinMs('lastTradeInsertAgeMs', Date.now() - at, config.READY_MAX_INGEST_AGE_MS, 'no trade inserted for');
    },
  });
  return { index };
}

/**
 * The index runner's catch-up (its backfill on a fresh store, or the seconds missed while stopped)
 * can take minutes: every 10 s until it is within READY_MAX_INDEX_LAG_MS of now, one line with how
 * far it got, then one line when it is there.
 */
function reportCatchUp({ config, log, life }: RoleContext, lastComputed: () => number | undefined, lagMs: () => number | undefined): void {
  const startedAt = Date.now();
  let from: number | undefined;
  let reported = false;
  const timer = setInterval(() => {
    const last = lastComputed();
    const lag = lagMs();
    if (last === undefined || lag === undefined) return;
    from ??= last;
    if (lag <= config.READY_MAX_INDEX_LAG_MS) {
      if (reported) log.info({ part: 'index', tookS: Math.round((Date.now() - startedAt) / 1000) }, 'index caught up');
      clearInterval(timer);
      return;
    }
    const target = last + lag / 1000;
    const donePct = target > from ? Math.floor(((last - from) / (target - from)) * 100) : 0;
    log.info({ part: 'index', computedUpTo: new Date((last + 1) * 1000).toISOString(), behindS: Math.round(lag / 1000), donePct }, 'index catching up');
    reported = true;
  }, 10_000);
  timer.unref();
  life.add('index-progress', 'consumers', async () => clearInterval(timer));
}
