// The soak run: the whole embedded service, as its own process, against the market simulator
// (run here, in this process, so that every trade the venues print is recorded), with faults
// injected on a schedule: dropped and stalled sockets, venue outages of a minute and of three, a
// store outage, a burst past the bus's bound, 20,000 idle connections held to its port, and a SIGKILL
// of the service with a restart a minute later; a fuzzing client sends random requests all along.
// At the end it checks, from the store and the API, that every trade printed was stored once, or
// lies in a recorded gap with its reason, that nothing else was lost, and that no request got a
// 5xx (but 503) or no answer outside the service's downtime.
//   npm run soak                 10 minutes, the default bounds
//   npm run soak -- --minutes 30 --keep   longer, and keep the data directory, the service log and
//                                         printed.jsonl (every trade printed: venue, market, id, time, delivered)
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import { fxDemoSnapshotFile } from '../aggregate/jobs/fxReference.ts';
import { KeyStore } from '../api/keys.ts';
import { answerHelpAndVersion } from '../infra/cli.ts';
import { migrate } from '../infra/migrate.ts';
import { openStore } from '../infra/store.ts';
import { venueEnvName } from '../ingest/venue.ts';
import { startSimulator, type SimulatedVenueId, type Simulator } from '../simulator/simulator.ts';
import type { SentTrade } from '../simulator/venueServer.ts';
import { accountTrades, lostIndexSeconds, tradeKey, type TradeAccount } from './soakChecks.ts';
import { idleFlood, startFuzzClient, type FuzzCounts } from './soakClients.ts';
import type { FloodCounts } from './support/idleFlood.ts';
import { getJson, rssMbOf, SoakService } from './soakService.ts';
import { freeLoopbackPort } from './support/ports.ts';
import { until } from './support/until.ts';

/** One fault, at a time from the start of the run. */
export type SoakFault =
  | { atMs: number; venue: SimulatedVenueId; fault: 'drop' | 'garbage' | 'reconnect' }
  | { atMs: number; venue: SimulatedVenueId; fault: 'stall' | 'outage'; ms: number }
  | { atMs: number; venue: SimulatedVenueId; fault: 'gap'; symbol: string }
  | { atMs: number; fault: 'store-outage'; ms: number }
  /** Every market trades `factor` times as often for `ms`: the bus's bound is crossed, what it refuses is recovered. */
  | { atMs: number; fault: 'burst'; factor: number; ms: number }
  /** SIGKILL of the service, started again `ms` later on the same data. */
  | { atMs: number; fault: 'kill'; ms: number }
  /** `connections` idle connections held to the service's port from other addresses for `ms` (test/support/idleFlood.ts). */
  | { atMs: number; fault: 'idle-flood'; connections: number; ms: number };

export interface SoakOptions {
  durationMs: number;
  faults: readonly SoakFault[];
  /** The service's in-process bus bound per topic (records). */
  busMaxRecordsPerTopic: number;
  /** Highest RSS (MB) the service may reach. */
  rssBoundMb: number;
  /** After a store outage or a restart, how long prices may stay unmeasured while the pipeline catches up (ms). */
  recoveryMs: number;
  /** Simulated trades per second per market (default 1). */
  tradesPerSecondPerMarket?: number;
  /** Assets the simulator lists (default: all it prices); fewer markets shorten the drain, paced by the venues' REST limits. */
  tickers?: readonly string[];
  /** Keep the data directory and the service log for a look afterwards. */
  keep?: boolean;
  report?: (line: string) => void;
}

/** The schedule for a run of `durationMs`: each fault at the same share of the run, whatever its length. */
export function faultSchedule(durationMs: number, storeOutageMs: number): SoakFault[] {
  const at = (share: number) => Math.round(durationMs * share);
  return [
    { atMs: at(0.05), venue: 'binance', fault: 'drop' },
    { atMs: at(0.1), venue: 'kraken', fault: 'stall', ms: Math.min(40_000, at(0.1)) },
    { atMs: at(0.15), venue: 'bybit', fault: 'gap', symbol: 'BTCUSDT' },
    { atMs: at(0.2), venue: 'okx', fault: 'garbage' },
    { atMs: at(0.22), venue: 'okx', fault: 'reconnect' },
    { atMs: at(0.25), fault: 'store-outage', ms: storeOutageMs },
    { atMs: at(0.35), venue: 'bitstamp', fault: 'outage', ms: Math.min(60_000, at(0.1)) },
    { atMs: at(0.4), venue: 'coinbase', fault: 'outage', ms: Math.min(180_000, at(0.25)) },
    { atMs: at(0.45), fault: 'idle-flood', connections: 20_000, ms: Math.min(60_000, at(0.08)) },
    { atMs: at(0.55), fault: 'burst', factor: 10, ms: Math.min(20_000, at(0.05)) },
    { atMs: at(0.7), fault: 'kill', ms: Math.min(60_000, at(0.08)) },
  ];
}

export interface SoakResult {
  pass: boolean;
  failures: string[];
  /** The closing line. */
  summary: string;
  figures: {
    seconds: number;
    /** Trades the venues printed on the markets the service collects, and their account. */
    trades: TradeAccount;
    /** Trades recovered from the venues' REST histories (the collectors' count, over the service's lives). */
    recovered: number;
    /** Trades delivered on a socket (a subset of those printed). */
    delivered: number;
    indexSecondsChecked: number;
    indexSecondsLost: number;
    rssStartMb: number;
    rssMaxMb: number;
    rssEndMb: number;
    /** Most of the main thread's heap in use at a poll (mds_thread_heap_bytes; MAIN_HEAP_MB bounds it). */
    mainHeapMaxMb: number;
    measuredShare: number;
    /** Events the bus refused (recovered where trades, counted where books). */
    busDropped: number;
    readyFailedDuringOutage: boolean;
    readyBackAfterOutage: boolean;
  };
}

interface Poll {
  at: number;
  rssMb: number | undefined;
  /** The main thread's heap in use (MB), from /metrics; undefined when it did not answer. */
  mainHeapMb: number | undefined;
  ready: number | undefined;
  /** Every asset polled had a measured price updated within 15 s. */
  measured: boolean | undefined;
  /** When not: the assets that were unmeasured or late, with their price's age in seconds. */
  late?: string;
}

/** Spans in which prices may go unmeasured: a store outage, the service down or a burst past capacity, each with its recovery grace. */
interface Outage {
  from: number;
  to: number;
  kind: 'store' | 'service' | 'burst';
}

const polledAssets = ['bitcoin', 'ethereum', 'solana', 'ripple', 'dogecoin'];

/** Sum of the samples of a counter or gauge in a /metrics text whose labels include `labels` (e.g. `topic="trades"`). */
export function metricSum(text: string, name: string, labels = ''): number {
  let sum = 0;
  // A sample without labels has no braces: it matches every `labels` but a non-empty one.
  for (const m of text.matchAll(new RegExp(`^${name}(?:\\{([^}]*)\\})? (\\S+)$`, 'gm'))) if ((m[1] ?? '').includes(labels)) sum += Number(m[2]);
  return sum;
}

/** What the service's /metrics says of its pipeline: trades published, the trade sink's uncommitted lag, gaps not yet ended. */
async function pipelineState(base: string): Promise<{ published: number; uncommitted: number | undefined; gapsPending: number; recovered: number; dropped: number }> {
  const text = await fetch(`${base}/metrics`).then((r) => r.text(), () => '');
  const lagLines = text.match(/^mds_bus_lag_records\{[^}]*group="aggregate-trades"[^}]*\} /gm) ?? [];
  return {
    published: metricSum(text, 'mds_venue_trades_total'),
    uncommitted: lagLines.length > 0 ? metricSum(text, 'mds_bus_lag_records', 'group="aggregate-trades"') : undefined,
    gapsPending: metricSum(text, 'mds_venue_gaps_pending'),
    recovered: metricSum(text, 'mds_venue_recovered_trades_total'),
    dropped: [...text.matchAll(/^mds_bus_dropped_total\{[^}]*\} (\d+)/gm)].reduce((n, m) => n + Number(m[1]), 0),
  };
}

/** A migrated store with a key for the soak, made before the service opens it (chDB allows one process per data directory). */
export async function prepareStore(dataDir: string, keySecret: string): Promise<string> {
  const setup = await openStore({ MDS_DATA_DIR: dataDir, CLICKHOUSE_DATABASE: 'mds', CLICKHOUSE_URL: undefined });
  await migrate(setup);
  const { key } = await new KeyStore(setup, { secret: keySecret }).create('soak');
  await setup.close();
  return key;
}

export function serviceEnv(simulator: Simulator, options: Pick<SoakOptions, 'busMaxRecordsPerTopic'>, port: number, dataDir: string, keySecret: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PORT: String(port),
    MDS_DATA_DIR: dataDir,
    API_KEY_SECRET: keySecret,
    MDS_SIMULATED: '1',
    MDS_FAULT_INJECTION: '1',
    LOG_LEVEL: 'info',
    QUOTA_PER_HOUR: '100000000',
    INDEX_BACKFILL_HOURS: '1',
    FX_REFERENCE_FILE: fxDemoSnapshotFile,
    BUS_MAX_RECORDS_PER_TOPIC: String(options.busMaxRecordsPerTopic),
  };
  for (const id of simulator.venues) {
    const { ws, rest } = simulator.endpoints(id);
    env[venueEnvName(id, 'WS')] = ws;
    env[venueEnvName(id, 'REST')] = rest;
  }
  return env;
}

/** The run's mutable account of what happened, as the faults and polls go. */
interface RunState {
  start: number;
  polls: Poll[];
  outages: Outage[];
  recoveredBeforeKills: number;
  /** What each idle flood's clients counted. */
  floods: FloodCounts[][];
  /** The service's open and refused connections half way through each flood (its /metrics). */
  floodSeen: { open: number; refused: number }[];
}

/** Injects one fault; a kill waits out its downtime and starts the service again. */
async function inject(f: SoakFault, ctx: { service: SoakService; simulator: Simulator; state: RunState; options: SoakOptions; base: string }): Promise<void> {
  const { service, simulator, state, options } = ctx;
  switch (f.fault) {
    case 'store-outage': {
      const r = await fetch(`${ctx.base}/__faults/store`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ fault: 'fail', ms: f.ms }) });
      if (!r.ok) throw new Error(`soak: the service refused the store fault (${r.status}): is MDS_FAULT_INJECTION honoured?`);
      state.outages.push({ from: Date.now(), to: Date.now() + f.ms, kind: 'store' });
      return;
    }
    case 'burst': {
      const normal = options.tradesPerSecondPerMarket ?? 1;
      simulator.setTradesPerSecondPerMarket(normal * f.factor);
      setTimeout(() => simulator.setTradesPerSecondPerMarket(normal), f.ms).unref();
      // More than the machine can take, by design: prices may lag until the backlog is through.
      state.outages.push({ from: Date.now(), to: Date.now() + f.ms, kind: 'burst' });
      return;
    }
    case 'idle-flood': {
      // Held from other addresses while the polls go on: nothing the operator or a client sees may change.
      void idleFlood(Number(new URL(ctx.base).port), f.connections, f.ms).then(
        (counts) => state.floods.push(counts),
        (err: Error) => state.floods.push([{ opened: 0, closed: 0, errors: { [err.message]: 1 } }]),
      );
      // Half way through, what the service holds and has refused, as its own metrics say.
      setTimeout(() => {
        void fetch(`${ctx.base}/metrics`)
          .then((r) => r.text())
          .then((text) => state.floodSeen.push({ open: metricSum(text, 'mds_http_connections_open'), refused: metricSum(text, 'mds_http_connections_refused_total') }), () => {});
      }, f.ms / 2).unref();
      return;
    }
    case 'kill': {
      // The collectors' count of recovered trades restarts with the process: keep what it said.
      state.recoveredBeforeKills += (await pipelineState(ctx.base)).recovered;
      const from = Date.now();
      await service.kill();
      await sleep(f.ms);
      await service.start();
      state.outages.push({ from, to: Date.now(), kind: 'service' });
      return;
    }
    default: {
      const { atMs: _, venue, ...fault } = f;
      simulator.venue(venue).inject(fault);
    }
  }
}

/** One poll of readiness, prices and memory. */
async function poll(service: SoakService, key: string): Promise<Poll> {
  const [ready, prices, metrics] = await Promise.all([
    getJson(`${service.base}/ready`),
    getJson(`${service.base}/v1/prices?ids=${polledAssets.join(',')}`, key),
    fetch(`${service.base}/metrics`, { signal: AbortSignal.timeout(5_000) }).then((r) => r.text(), () => ''),
  ]);
  const mainHeapMb = metrics.includes('mds_thread_heap_bytes{thread="main"') ? metricSum(metrics, 'mds_thread_heap_bytes', 'thread="main",kind="used"') / 1_048_576 : undefined;
  const list = (prices.body as { prices?: { assetId: string; measured: boolean; updatedAt: number }[] } | undefined)?.prices;
  const now = Date.now();
  const fresh = (p: { measured: boolean; updatedAt: number }) => p.measured && now - p.updatedAt < 15_000;
  const measured = list ? list.length === polledAssets.length && list.every(fresh) : undefined;
  const late = list
    ?.filter((p) => !fresh(p))
    .map((p) => `${p.assetId} ${p.measured ? `${Math.round((now - p.updatedAt) / 1000)} s old` : 'unmeasured'}`)
    .join(', ');
  return { at: now, rssMb: rssMbOf(service.pid), mainHeapMb, ready: ready.status || undefined, measured, ...(measured === false ? { late: late || `${list?.length ?? 0} prices` } : {}) };
}

/** Runs the schedule: faults at their times, a poll every 2 s. */
async function runSchedule(ctx: { service: SoakService; simulator: Simulator; state: RunState; options: SoakOptions; base: string; key: string; report: (line: string) => void; printed: () => number }): Promise<void> {
  const { service, state, options, report } = ctx;
  const pending = [...options.faults].sort((a, b) => a.atMs - b.atMs);
  while (Date.now() - state.start < options.durationMs) {
    const elapsed = Date.now() - state.start;
    while (pending[0] && pending[0].atMs <= elapsed) {
      const f = pending.shift()!;
      report(`soak: ${Math.round(elapsed / 1000)} s: ${f.fault}${'venue' in f ? ` ${f.venue}` : ''}${'ms' in f ? ` for ${f.ms / 1000} s` : ''}${'factor' in f ? ` x${f.factor}` : ''}${'connections' in f ? `, ${f.connections} connections` : ''}`);
      await inject(f, ctx);
    }
    const p = await poll(service, ctx.key);
    state.polls.push(p);
    if (state.polls.length % 30 === 0) report(`soak: ${Math.round((p.at - state.start) / 1000)} s: rss ${Math.round(p.rssMb ?? 0)} MB, ready ${p.ready}, measured ${p.measured}, printed ${ctx.printed()}`);
    if (service.failedExit !== undefined) throw new Error(`soak: the service exited (${service.failedExit}) during the run`);
    await sleep(2_000);
  }
}

/**
 * The market stopped: waits until every gap is recovered and every trade published is committed.
 * Recovery runs at each venue's REST pace (Bitfinex's is one request in 5 s, and a restart opens a
 * gap per market), so the wait has no fixed length: it fails once nothing moved for `stuckMs`.
 * Settled means nothing moved for `quietMs`: the collectors' counters reach /metrics from their
 * thread about once a second, later on a loaded machine, so two equal polls a second apart can be
 * one stale reading (under six busy loops, after a drain that settled so, 1,286 trades of the run's
 * last 30 s were neither stored nor in a gap).
 */
async function drain(base: string, failures: string[], stuckMs = 120_000, quietMs = 5_000): Promise<void> {
  let last: Awaited<ReturnType<typeof pipelineState>> | undefined;
  let seen = '';
  let movedAt = Date.now();
  const started = Date.now();
  await until(
    async () => {
      last = await pipelineState(base);
      const { gapsPending, uncommitted, published, recovered } = last;
      const now = JSON.stringify({ gapsPending, uncommitted, published, recovered });
      if (now !== seen) [seen, movedAt] = [now, Date.now()];
      const settled = gapsPending === 0 && uncommitted === 0 && Date.now() - movedAt >= quietMs;
      if (!settled && Date.now() - movedAt > stuckMs) throw new Error(`soak: the pipeline did not drain once the market stopped: nothing moved for ${stuckMs / 1000} s ${now}`);
      return settled;
    },
    'soak: the pipeline to drain once the market stopped (gaps recovered, trades committed)',
    { timeoutMs: 30 * 60_000, everyMs: 1_000, context: () => JSON.stringify(last) },
  )
    .then(() => process.stdout.write(`soak: drained in ${Math.round((Date.now() - started) / 1000)} s\n`))
    .catch((err: Error) => failures.push(err.message));
}

export async function runSoak(options: SoakOptions): Promise<SoakResult> {
  const report = options.report ?? ((line: string) => process.stdout.write(`${line}\n`));
  const dataDir = mkdtempSync(join(tmpdir(), 'mds-soak-'));
  const logFile = join(dataDir, 'service.log');
  const port = await freeLoopbackPort();
  const failures: string[] = [];
  const keySecret = randomBytes(32).toString('hex');
  const key = await prepareStore(dataDir, keySecret);

  const simulator = await startSimulator({ seed: 7, tickMs: 250, tradesPerSecondPerMarket: options.tradesPerSecondPerMarket ?? 1, ...(options.tickers ? { tickers: options.tickers } : {}) });
  const delivered = new Set<string>();
  /** Per market, the time of the first trade a socket delivered to the service: where it began to follow the market. */
  const firstDelivered = new Map<string, number>();
  const stopDelivered = simulator.onTradeSent((t) => {
    delivered.add(tradeKey(t.venue, t.market, t.tradeId));
    const market = `${t.venue}\u0000${t.market}`;
    if (!firstDelivered.has(market)) firstDelivered.set(market, t.trade.time);
  });
  const printed: SentTrade[] = [];
  let recording = false;
  const stopPrinted = simulator.onTradePrinted((t) => recording && printed.push(t));
  const service = new SoakService({ port, env: serviceEnv(simulator, options, port, dataDir, keySecret), venues: simulator.venues, logFile });
  const state: RunState = { start: 0, polls: [], outages: [], recoveredBeforeKills: 0, floods: [], floodSeen: [] };
  let fuzz: ReturnType<typeof startFuzzClient> | undefined;
  let fuzzed: FuzzCounts | undefined;
  let end = 0;
  let last: Awaited<ReturnType<typeof pipelineState>> | undefined;
  try {
    const startedAt = Date.now();
    await service.start();
    // The run starts once every polled price is measured, not bitcoin's alone: the polls hold all
    // of them to it from the first, and the others can come seconds after bitcoin's.
    await service.untilMeasured(key, polledAssets);
    state.start = Date.now();
    recording = true;
    report(`soak: service pid ${service.pid} on ${service.base}, ${simulator.venues.length} simulated venues, ${options.durationMs / 1000} s, every polled price measured ${((state.start - startedAt) / 1000).toFixed(1)} s after the start, log ${logFile}`);
    fuzz = startFuzzClient(service.base, key);
    await runSchedule({ service, simulator, state, options, base: service.base, key, report, printed: () => printed.length });
  } finally {
    // No trade may be printed while the rest settles: stop the market, let the pipeline drain.
    recording = false;
    simulator.pause();
    end = Date.now();
    fuzzed = await fuzz?.stop();
    if (service.failedExit === undefined) {
      await drain(service.base, failures);
      last = await pipelineState(service.base);
    }
  }
  const code = await service.stop();
  stopDelivered();
  stopPrinted();
  await simulator.close();
  if (code !== 0) failures.push(`the service exited with ${code} on SIGTERM`);
  if (fuzzed) checkHostileClients(fuzzed, state, options, failures);
  const figures = await verify({ dataDir, printed, firstDelivered, state, end, options, failures, delivered: delivered.size, recovered: state.recoveredBeforeKills + (last?.recovered ?? 0), busDropped: last?.dropped ?? 0 });
  if (options.keep) {
    // For a look afterwards: every trade printed in the run, when, and whether a socket got it.
    const lines = printed.map((p) => JSON.stringify([p.venue, p.market, p.tradeId, p.trade.time, delivered.has(tradeKey(p.venue, p.market, p.tradeId))]));
    writeFileSync(join(dataDir, 'printed.jsonl'), `${lines.join('\n')}\n`);
  } else rmSync(dataDir, { recursive: true, force: true });
  return { pass: failures.length === 0, failures, summary: `${summaryLine(figures, options, failures)}\n${hostileLine(fuzzed, state)}`, figures };
}

/** The fuzzing client: no 5xx but 503, and an answer to every request, but while the service was down (killed). */
function checkHostileClients(fuzzed: FuzzCounts, state: RunState, options: SoakOptions, failures: string[]): void {
  const down = (at: number) => state.outages.some((o) => o.kind === 'service' && at >= o.from - 10_000 && at <= o.to + options.recoveryMs);
  if (fuzzed.serverErrors.length > 0) failures.push(`${fuzzed.serverErrors.length} fuzzed requests got a 5xx other than 503, e.g. ${fuzzed.serverErrors.slice(0, 3).map((e) => e.what).join('; ')}`);
  const unanswered = fuzzed.noAnswer.filter((e) => !down(e.at));
  if (unanswered.length > 0) failures.push(`${unanswered.length} fuzzed requests got no answer while the service ran, e.g. ${unanswered.slice(0, 3).map((e) => `${Math.round((e.at - state.start) / 1000)} s: ${e.what}`).join('; ')}`);
  const floodErrors = state.floods.flat().flatMap((c) => Object.keys(c.errors).filter((code) => code !== 'ECONNREFUSED'));
  if (floodErrors.length > 0) failures.push(`the idle flood could not run as planned: ${[...new Set(floodErrors)].join(', ')}`);
}

function hostileLine(fuzzed: FuzzCounts | undefined, { floods, floodSeen }: Pick<RunState, 'floods' | 'floodSeen'>): string {
  const classes = Object.entries(fuzzed?.byClass ?? {}).sort().map(([c, n]) => `${c} ${n}`).join(', ');
  const flood = floods.flat();
  const sum = (pick: (c: FloodCounts) => number) => flood.reduce((n, c) => n + pick(c), 0);
  const seen = floodSeen.map((s) => `${s.open} open, ${s.refused} refused so far`).join('; ') || 'not read';
  return (
    `soak: fuzzed ${fuzzed?.sent ?? 0} requests (${classes || 'none'}; 5xx but 503: ${fuzzed?.serverErrors.length ?? 0}, no answer: ${fuzzed?.noAnswer.length ?? 0}), ` +
    `idle floods ${floods.length}: connections made ${sum((c) => c.opened)}, closed by the service ${sum((c) => c.closed)}; the service half way: ${seen}`
  );
}

/** Checks the store and the polls once the service stopped; adds what failed to `failures`. */
async function verify(run: {
  dataDir: string;
  printed: readonly SentTrade[];
  firstDelivered: ReadonlyMap<string, number>;
  state: RunState;
  end: number;
  options: SoakOptions;
  failures: string[];
  delivered: number;
  recovered: number;
  busDropped: number;
}): Promise<SoakResult['figures']> {
  const { state, options, failures, end } = run;
  const store = await openStore({ MDS_DATA_DIR: run.dataDir, CLICKHOUSE_DATABASE: 'mds', CLICKHOUSE_URL: undefined });
  try {
    const trades = await accountTrades(store, run.printed, { from: state.start, to: end }, run.firstDelivered);
    if (trades.unaccounted.length > 0) failures.push(`${trades.unaccounted.length} printed trades are neither stored nor in a recorded gap, e.g. ${trades.unaccounted.slice(0, 3).join(', ')} (${trades.unaccountedDetail})`);
    if (trades.unexpected.length > 0) failures.push(`${trades.unexpected.length} stored trades were never printed, e.g. ${trades.unexpected.slice(0, 3).join(', ')}`);
    if (trades.duplicates > 0) failures.push(`${trades.duplicates} trades stored more than once`);

    // The index from a minute in (its windows start filling) to the last second it had time for.
    const index = await lostIndexSeconds(store, Math.floor(state.start / 1000) + 60, Math.floor(end / 1000) - 10);
    if (index.lost.length > 0) failures.push(`${index.lost.length} index seconds lost, e.g. ${index.lost.slice(0, 5).join(', ')}`);

    const rss = state.polls.map((p) => p.rssMb).filter((v): v is number => v !== undefined);
    const rssMaxMb = Math.max(...rss);
    if (rssMaxMb > options.rssBoundMb) failures.push(`RSS reached ${Math.round(rssMaxMb)} MB, over the ${options.rssBoundMb} MB bound`);
    const mainHeaps = state.polls.map((p) => p.mainHeapMb).filter((mb) => mb !== undefined);
    if (mainHeaps.length === 0) failures.push("no poll read the main thread's heap from /metrics");
    const mainHeapMaxMb = Math.max(0, ...mainHeaps);

    const inOutage = (at: number) => state.outages.some((o) => at >= o.from && at <= o.to + options.recoveryMs);
    const outside = state.polls.filter((p) => !inOutage(p.at));
    const measured = outside.filter((p) => p.measured === true).length;
    const measuredShare = outside.length === 0 ? 1 : measured / outside.length;
    if (measuredShare < 1) {
      const when = outside
        .filter((p) => p.measured !== true)
        .slice(0, 5)
        .map((p) => `${Math.round((p.at - state.start) / 1000)} s: ${p.late ?? 'no answer'}`);
      failures.push(`prices unmeasured or late in ${outside.length - measured} of ${outside.length} polls outside the outages (${when.join('; ')})`);
    }
    const storeOutages = state.outages.filter((o) => o.kind === 'store');
    const readyFailedDuringOutage = storeOutages.every((o) => state.polls.some((p) => p.at >= o.from && p.at <= o.from + 30_000 && p.ready === 503));
    const readyBackAfterOutage = storeOutages.every((o) => state.polls.some((p) => p.at > o.to && p.at <= o.to + options.recoveryMs && p.ready === 200));
    if (!readyFailedDuringOutage) failures.push('/ready did not turn 503 within 30 s of a store outage');
    if (!readyBackAfterOutage) failures.push(`/ready did not come back to 200 within ${options.recoveryMs / 1000} s of a store outage's end`);
    return {
      seconds: Math.round((end - state.start) / 1000),
      trades,
      recovered: run.recovered,
      delivered: run.delivered,
      indexSecondsChecked: index.checked,
      indexSecondsLost: index.lost.length,
      rssStartMb: Math.round(rss[0] ?? 0),
      rssMaxMb: Math.round(rssMaxMb),
      rssEndMb: Math.round(rss.at(-1) ?? 0),
      mainHeapMaxMb: Math.round(mainHeapMaxMb),
      measuredShare,
      busDropped: run.busDropped,
      readyFailedDuringOutage,
      readyBackAfterOutage,
    };
  } finally {
    await store.close();
  }
}

function summaryLine(f: SoakResult['figures'], options: SoakOptions, failures: readonly string[]): string {
  const t = f.trades;
  const unrecoverable = Object.entries(t.unrecoverable).map(([reason, n]) => `${reason} ${n}`).join(', ') || 'none';
  return (
    `soak: ${f.seconds} s, ${options.faults.length} faults, trades printed ${t.printed} stored ${t.stored} recovered ${f.recovered} unrecoverable (${unrecoverable}) ` +
    `lost without a gap ${t.unaccounted.length} duplicates ${t.duplicates} unexpected ${t.unexpected.length} (delivered on sockets ${f.delivered}), ` +
    `index seconds lost ${f.indexSecondsLost} of ${f.indexSecondsChecked}, rss start ${f.rssStartMb}, max ${f.rssMaxMb}, end ${f.rssEndMb} MB (bound ${options.rssBoundMb}), main heap max ${f.mainHeapMaxMb} MB, ` +
    `prices measured ${(f.measuredShare * 100).toFixed(1)}% outside outages, bus refused ${f.busDropped}, ready 503 in outage ${f.readyFailedDuringOutage ? 'yes' : 'no'}, back ${f.readyBackAfterOutage ? 'yes' : 'no'}: ${failures.length === 0 ? 'PASS' : 'FAIL'}`
  );
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const usage = `usage: npm run soak -- [--minutes 10] [--keep]
  --minutes N   length of the run (default 10)
  --keep        keep the data directory and the service log afterwards
  --help, -h    this text
  --version     the service's version`;
  answerHelpAndVersion(process.argv.slice(2), usage);
  const { values } = parseArgs({ options: { minutes: { type: 'string', default: '10' }, keep: { type: 'boolean', default: false } } });
  const durationMs = Number(values.minutes) * 60_000;
  if (!(durationMs > 0)) {
    console.error(usage);
    process.exit(2);
  }
  const result = await runSoak({
    durationMs,
    faults: faultSchedule(durationMs, 60_000),
    busMaxRecordsPerTopic: 100_000,
    rssBoundMb: 1_536,
    recoveryMs: 60_000,
    keep: values.keep,
  });
  for (const failure of result.failures) console.log(`soak: FAIL: ${failure}`);
  console.log(result.summary);
  process.exit(result.pass ? 0 : 1);
}
