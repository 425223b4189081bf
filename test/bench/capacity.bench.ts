// Capacity of the service as a user runs it: websocket frames in (the load generator,
// test/loadgen/, its own process, speaking the venues' formats on loopback), trades queryable out.
// Ramps the trade rate in steps and keeps the highest step sustained with lag p99 < 2 s and nothing
// lost; at that rate, the API under autocannon (64 connections) and a burst (trades x10); then
// what was lost, bytes per trade on disk, and the bare ceilings measured in the same run.
//
// Lag, as measured here: from the venue time of a trade to the moment the service reports it
// stored (`mds_store_inserted_rows_total{table="trades"}` on /metrics, scraped every 200 ms). The
// insert is synchronous with the candle views, so a stored trade is in its 1m candle; the API's
// response cache (5 s on /v1/prices, 60 s on ohlc) and the index lag (2 s) come on top of this and
// are not measured. For each second s of venue time: the first scrape whose count reaches every
// trade the generator sent up to the end of s, minus that end.
//
// Usage: npm run bench:capacity [-- --steps 2000,5000,10000,20000 --step-seconds 20 --books-per-trade 1
//          --markets 10 --venues binance,bybit,okx,coinbase (default: all 12) --api-seconds 10 --burst-seconds 30 --kafka
//          --service-node-options='--cpu-prof --cpu-prof-dir=/tmp/prof']
// --service-node-options: node flags for the service's processes (a profile of the service under this load).
// With KAFKA_BROKERS set or --kafka (starts the Kafka mock with kcat): roles ingest, aggregate and
// api as separate processes over one store (test/support/clickhouseFront.ts over chDB).
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { venueEnvName } from '../../ingest/venue.ts';
import { loadConfig } from '../../infra/config.ts';
import { openStore, type Store } from '../../infra/store.ts';
import type { SentCounts, VenueRate } from '../loadgen/generator.ts';
import { sampleFrames, sampleTrades } from '../loadgen/samples.ts';
import { loadVenueFormats } from '../loadgen/venues/index.ts';
import { roleCommand } from '../support/roleCommand.ts';
import { stopChild } from '../support/stopChild.ts';
import { timeRawInsert } from './rawInsert.ts';

const { values: args } = parseArgs({
  options: {
    steps: { type: 'string', default: '2000,5000,10000,20000,30000,40000,50000' },
    'step-seconds': { type: 'string', default: '20' },
    'books-per-trade': { type: 'string', default: '1' },
    markets: { type: 'string', default: '10' },
    // Every native venue the generator speaks, each in its own format.
    venues: { type: 'string', default: Object.keys(loadVenueFormats).join(',') },
    'api-seconds': { type: 'string', default: '10' },
    'burst-seconds': { type: 'string', default: '30' },
    'burst-factor': { type: 'string', default: '10' },
    kafka: { type: 'boolean', default: false },
    'service-node-options': { type: 'string', default: '' },
  },
});
const steps = args.steps.split(',').map(Number);
const stepSeconds = Number(args['step-seconds']);
const booksPerTrade = Number(args['books-per-trade']);
const markets = Number(args.markets);
const venues = args.venues.split(',');
const apiSeconds = Number(args['api-seconds']);
const burstSeconds = Number(args['burst-seconds']);
const burstFactor = Number(args['burst-factor']);
const serviceNodeOptions = args['service-node-options'].split(' ').filter(Boolean);
const lagTargetMs = 2_000;
const scrapeMs = 200;
const root = join(import.meta.dirname, '../..');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// ---- processes ----------------------------------------------------------------------------------

interface Proc {
  name: string;
  child: ChildProcess;
  output: string;
}
const procs: Proc[] = [];

/** Starts `node <args>` and resolves once its output matches `ready` (the match returned). */
function start(name: string, argv: string[], env: NodeJS.ProcessEnv, ready: RegExp, timeoutMs = 120_000): Promise<{ proc: Proc; match: RegExpMatchArray }> {
  const child = spawn(name === 'kafka mock' ? 'kcat' : process.execPath, argv, { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
  const proc: Proc = { name, child, output: '' };
  procs.push(proc);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${name} not ready in ${timeoutMs} ms:\n${proc.output.slice(-3000)}`)), timeoutMs);
    const onData = (chunk: Buffer) => {
      // Keep the tail only: a long run logs a lot.
      proc.output = (proc.output + chunk.toString()).slice(-20_000);
      const match = proc.output.match(ready);
      if (match) {
        clearTimeout(timer);
        child.stdout!.removeAllListeners('data');
        child.stderr!.removeAllListeners('data');
        child.stdout!.on('data', (c: Buffer) => (proc.output = (proc.output + c.toString()).slice(-20_000)));
        child.stderr!.on('data', (c: Buffer) => (proc.output = (proc.output + c.toString()).slice(-20_000)));
        resolve({ proc, match });
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`${name} exited (${code ?? signal}):\n${proc.output.slice(-3000)}`));
    });
  });
}

function runToEnd(argv: string[], env: NodeJS.ProcessEnv): string {
  return execFileSync(process.execPath, argv, { cwd: root, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

async function stop(proc: Proc): Promise<void> {
  await stopChild(proc.child, { killAfterMs: 30_000 });
}

process.once('exit', () => {
  for (const p of procs) if (p.child.exitCode === null) p.child.kill('SIGKILL');
});

// ---- what the processes report ------------------------------------------------------------------

/** Sum of a Prometheus series over the lines that carry `label` (all when unset). */
function metric(text: string, name: string, label = ''): number {
  let sum = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(name) || (line[name.length] !== '{' && line[name.length] !== ' ') || !line.includes(label)) continue;
    sum += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return sum;
}

const getText = async (url: string) => (await fetch(url, { signal: AbortSignal.timeout(5_000) })).text();

const clockTicks = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }));
/** CPU seconds of a process, in total and by thread name (chDB names its threads; the JS thread is the process name). */
function cpuOf(pid: number): { total: number; threads: Map<string, number> } {
  const threads = new Map<string, number>();
  let total = 0;
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const seconds = (Number(fields[11]) + Number(fields[12])) / clockTicks;
      // Numbered pools (QueryPipelineEx, BgSchPool...) are one group.
      const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')).replace(/[\d-]+$/, '');
      threads.set(name, (threads.get(name) ?? 0) + seconds);
      total += seconds;
    } catch {
      // The thread ended between the listing and the read.
    }
  }
  return { total, threads };
}

const rssMb = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;

const quantile = (sorted: readonly number[], q: number) => (sorted.length === 0 ? Number.NaN : sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!);

// ---- the run ------------------------------------------------------------------------------------

const kafka = args.kafka || process.env.KAFKA_BROKERS !== undefined;
const dataDir = mkdtempSync(join(tmpdir(), 'mds-capacity-'));
const baseEnv: NodeJS.ProcessEnv = {
  ...process.env,
  MDS_DATA_DIR: dataDir,
  LOG_LEVEL: 'info',
  PORT: '0',
  QUOTA_PER_HOUR: '1000000000',
  API_KEY_SECRET: randomBytes(32).toString('hex'),
};

console.log(`capacity bench: ${kafka ? 'split roles over Kafka' : 'embedded (one process)'}, venues ${venues.join(',')}, ${markets} markets each, ${booksPerTrade} book msg per trade, steps ${steps.join(',')} trades/s x ${stepSeconds} s, node ${process.version}`);

// Bare ceiling 1: JSON.parse of the same frames on one core (this process, before anything runs).
const frames = sampleFrames(venues, markets, 5_000, booksPerTrade);
let parsed = 0;
const parseStart = performance.now();
while (performance.now() - parseStart < 1_000) for (const f of frames) parsed += JSON.parse(f) ? 1 : 0;
const parseCeiling = parsed / ((performance.now() - parseStart) / 1000);
const frameBytes = frames.reduce((s, f) => s + f.length, 0) / frames.length;

if (kafka && !process.env.KAFKA_BROKERS) {
  // The mock cluster lives as long as this idle kcat consumer (as in test/run.sh).
  const { match } = await start('kafka mock', ['-b', 'mock:1', '-X', 'test.mock.num.brokers=1', '-X', 'debug=mock', '-C', '-q', '-t', 'mds-capacity-idle'], baseEnv, /bootstrap\.servers=([0-9.:]+)/, 30_000);
  baseEnv.KAFKA_BROKERS = match[1];
}
if (kafka) {
  const { match } = await start('clickhouse front', ['test/support/clickhouseFront.ts', join(dataDir, 'chdb')], baseEnv, /listening on (http:\S+)/);
  baseEnv.CLICKHOUSE_URL = match[1];
}

const { proc: loadgen, match: loadgenReady } = await start('loadgen', ['test/loadgen/main.ts', '--venues', venues.join(','), '--markets', String(markets)], baseEnv, /^\{.*\}$/m);
const { control, endpoints } = JSON.parse(loadgenReady[0]) as { control: string; endpoints: Record<string, { ws: string; rest: string }> };
const serviceEnv: NodeJS.ProcessEnv = { ...baseEnv };
for (const [id, e] of Object.entries(endpoints)) {
  serviceEnv[venueEnvName(id, 'WS')] = e.ws;
  serviceEnv[venueEnvName(id, 'REST')] = e.rest;
}

/** A role of the service as package.json's scripts start it (roleCommand), with the bench's node options. */
function startRole(role: string, args: string[], name = role) {
  const command = roleCommand(role, args, serviceEnv, serviceNodeOptions);
  return start(name, command.argv, command.env, listening);
}
function runRole(role: string, args: string[]): string {
  const command = roleCommand(role, args, serviceEnv);
  return runToEnd(command.argv, command.env);
}

runRole('migrate', []);
const apiKey = runToEnd(['api/keysCli.ts', 'create', '--name', 'capacity-bench'], serviceEnv).trim();

const listening = /"msg":"(?:api|health and metrics) listening"[^\n]*"url":"(http:[^"]+)"|"url":"(http:[^"]+)"[^\n]*"msg":"(?:api|health and metrics) listening"/;
const urlOf = (m: RegExpMatchArray) => (m[1] ?? m[2])!;
/** Where the API is, where collectors and the aggregator report. */
let apiUrl: string;
let ingestUrl: string;
let aggregateUrl: string;
const service: Proc[] = [];
if (kafka) {
  const ingest = await startRole('ingest', ['--venues', venues.join(',')]);
  const aggregate = await startRole('aggregate', []);
  const api = await startRole('api', []);
  [ingestUrl, aggregateUrl, apiUrl] = [urlOf(ingest.match), urlOf(aggregate.match), urlOf(api.match)];
  service.push(ingest.proc, aggregate.proc, api.proc);
} else {
  const all = await startRole('all', ['--venues', venues.join(',')], 'service');
  apiUrl = ingestUrl = aggregateUrl = urlOf(all.match);
  service.push(all.proc);
}

const sent = async () => (await fetch(`${control}/sent`)).json() as Promise<SentCounts>;
const post = (path: string, body: unknown) => fetch(control + path, { method: 'POST', body: JSON.stringify(body) });
const setRate = (tradesPerSecond: number) =>
  post('/rates', Object.fromEntries(venues.map((v): [string, VenueRate] => [v, { trades: tradesPerSecond / venues.length, books: (tradesPerSecond * booksPerTrade) / venues.length }])));

// Every collector connected and its books synced before any load.
const deadline = Date.now() + 90_000;
while (metric(await getText(`${ingestUrl}/metrics`), 'mds_venue_connected') < venues.length) {
  if (Date.now() > deadline) throw new Error(`collectors not connected:\n${service.map((p) => p.output.slice(-2000)).join('\n')}`);
  await sleep(500);
}
await sleep(2_000);

/**
 * The aggregating process over time, scraped all run long: stored trades, its event loops' longest
 * stalls (the main thread's; the API thread's when embedded), its store time (s).
 */
interface Scrape {
  at: number;
  stored: number;
  loopMaxMs: number;
  apiLoopMaxMs: number;
  querySeconds: number;
  queries: number;
  insertSeconds: number;
}
const scrapes: Scrape[] = [];
let scraping = true;
const scraper = (async () => {
  while (scraping) {
    const at = Date.now();
    try {
      const text = await getText(`${aggregateUrl}/metrics`);
      // prom-client resets its event-loop delay histogram at each scrape: the max is this 200 ms's longest stall.
      scrapes.push({
        at,
        stored: metric(text, 'mds_store_inserted_rows_total', 'table="trades"'),
        loopMaxMs: metric(text, 'nodejs_eventloop_lag_max_seconds') * 1000,
        apiLoopMaxMs: metric(text, 'mds_api_thread_nodejs_eventloop_lag_max_seconds') * 1000,
        querySeconds: metric(text, 'mds_store_query_seconds_sum'),
        queries: metric(text, 'mds_store_query_seconds_count'),
        insertSeconds: metric(text, 'mds_store_insert_seconds_sum'),
      });
    } catch {
      // A scrape that times out is a gap in the samples, not a failure of the run.
    }
    await sleep(Math.max(0, scrapeMs - (Date.now() - at)));
  }
})();

/** Lag of each whole second in [from, to) whose trades the store reached (censored at the last scrape when it has not). */
function lags(counts: SentCounts, from: number, to: number): number[] {
  const seconds = Object.keys(counts.perSecond).map(Number).sort((a, b) => a - b);
  let cumulative = 0;
  const out: number[] = [];
  let i = 0;
  const last = scrapes.at(-1)!;
  for (const s of seconds) {
    cumulative += counts.perSecond[s]!;
    const end = (s + 1) * 1000;
    if (end <= from || end > to) continue;
    while (i < scrapes.length && scrapes[i]!.stored < cumulative) i++;
    out.push((i < scrapes.length ? scrapes[i]!.at : last.at) - end);
  }
  return out.sort((a, b) => a - b);
}

/** An event loop of the aggregating process over [from, to): its longest stall, and the median of each 200 ms's longest. */
function loopDelay(from: number, to: number, loop: 'loopMaxMs' | 'apiLoopMaxMs' = 'loopMaxMs'): string {
  const maxima = scrapes.filter((x) => x.at >= from && x.at < to).map((x) => x[loop]).sort((a, b) => a - b);
  return `longest stall ${Math.round(maxima.at(-1) ?? Number.NaN)} ms, median of 200 ms maxima ${Math.round(quantile(maxima, 0.5))} ms`;
}

/** The main thread's event loop, and the API thread's where the API has one (embedded). */
function loopDelays(from: number, to: number): string {
  const main = `event loop: ${loopDelay(from, to)}`;
  return scrapes.some((x) => x.apiLoopMaxMs > 0) ? `${main}; API thread's: ${loopDelay(from, to, 'apiLoopMaxMs')}` : main;
}

interface Usage {
  at: number;
  cpu: Map<string, ReturnType<typeof cpuOf>>;
}
// The Kafka mock and the ClickHouse front are the broker and store a split deployment would run elsewhere: shown apart.
const watched = [...service, loadgen, ...procs.filter((p) => p.name === 'kafka mock' || p.name === 'clickhouse front')];
const usage = (): Usage => ({ at: Date.now(), cpu: new Map(watched.map((p) => [p.name, cpuOf(p.child.pid!)])) });
const cpuShare = (a: Usage, b: Usage, name: string) => (b.cpu.get(name)!.total - a.cpu.get(name)!.total) / ((b.at - a.at) / 1000);
const threadShares = (a: Usage, b: Usage, name: string) =>
  [...b.cpu.get(name)!.threads]
    .map(([thread, s]): [string, number] => [thread, (s - (a.cpu.get(name)!.threads.get(thread) ?? 0)) / ((b.at - a.at) / 1000)])
    .filter(([, share]) => share >= 0.01)
    .sort((x, y) => y[1] - x[1]);
const pct = (share: number) => `${Math.round(share * 100)} %`;

interface Step {
  target: number;
  tradesPerSecond: number;
  messagesPerSecond: number;
  storedPerSecond: number;
  p50: number;
  p99: number;
  dropped: number;
  /** Cores each watched process used during the step. */
  cores: Map<string, number>;
  ok: boolean;
}

/** /metrics of the collectors' process and of the aggregating one: one text where they are the same process. */
async function serviceMetrics(): Promise<{ ingest: string; aggregate: string }> {
  const ingest = await getText(`${ingestUrl}/metrics`);
  return { ingest, aggregate: aggregateUrl === ingestUrl ? ingest : await getText(`${aggregateUrl}/metrics`) };
}

/** Events the bus refused so far, where they are refused: the collectors' producer (over Kafka) and the consumers' side. */
function busDropped({ ingest, aggregate }: { ingest: string; aggregate: string }): number {
  const dropped = (text: string) => metric(text, 'mds_bus_dropped_total');
  return aggregate === ingest ? dropped(ingest) : dropped(ingest) + dropped(aggregate);
}

async function runStep(target: number): Promise<Step> {
  await setRate(target);
  const before = await sent();
  const droppedBefore = busDropped(await serviceMetrics());
  const scrapeBefore = scrapes.at(-1);
  const storedBefore = scrapeBefore?.stored ?? 0;
  const a = usage();
  const from = Date.now();
  await sleep(stepSeconds * 1000);
  const b = usage();
  const after = await sent();
  const scrapeAfter = scrapes.at(-1)!;
  const to = Date.now();
  // Lags of the step's seconds after its first two (the rate change settling), each given up to 2 s more to land.
  await sleep(lagTargetMs + scrapeMs);
  // Where the trades not yet stored wait at the step's end: unread or unparsed (the collectors are
  // behind the generator), or published and not yet committed by the trade sink (the sink and the
  // store are behind; over Kafka, in the broker).
  const atEnd = await serviceMetrics();
  const collected = metric(atEnd.ingest, 'mds_venue_trades_total');
  const heldByBus = metric(atEnd.aggregate, 'mds_bus_lag_records', 'group="aggregate-trades"');
  const stepLags = lags(after, from + 2_000, to);
  const seconds = (to - from) / 1000;
  const last = scrapes.at(-1)!;
  const step: Step = {
    target,
    tradesPerSecond: (after.trades - before.trades) / seconds,
    messagesPerSecond: (after.frames - before.frames) / seconds,
    storedPerSecond: (last.stored - storedBefore) / ((last.at - from) / 1000),
    p50: quantile(stepLags, 0.5),
    p99: quantile(stepLags, 0.99),
    dropped: busDropped(atEnd) - droppedBefore,
    cores: new Map(watched.map((p) => [p.name, cpuShare(a, b, p.name)])),
    ok: false,
  };
  // Sustained: the lag holds, the bus refused nothing, and the generator kept up with the rate asked.
  step.ok = step.p99 < lagTargetMs && step.dropped === 0 && step.tradesPerSecond >= 0.95 * target && after.droppedClients === 0;
  const cpu = [...step.cores].map(([name, share]) => `${name} ${pct(share)}`).join(', ');
  // chDB answers one statement at a time: store seconds per second near 1 is a queue.
  const storeOver = (field: 'querySeconds' | 'queries' | 'insertSeconds') =>
    scrapeBefore ? ((scrapeAfter[field] - scrapeBefore[field]) / ((scrapeAfter.at - scrapeBefore.at) / 1000)).toFixed(2) : 'n/a';
  const store = `store per s: queries ${storeOver('querySeconds')} s (${storeOver('queries')}), inserts ${storeOver('insertSeconds')} s`;
  console.log(
    `step ${target} trades/s: sent ${Math.round(step.tradesPerSecond)} trades/s, ${Math.round(step.messagesPerSecond)} msg/s; stored ${Math.round(step.storedPerSecond)} trades/s; ${store}; ` +
      `lag p50 ${step.p50} ms, p99 ${step.p99} ms; behind at its end: collectors ${Math.max(0, after.trades - collected)} trades, bus ${heldByBus}; bus dropped ${step.dropped}; ${loopDelays(from, to)}; CPU ${cpu}; RSS ${service.map((p) => `${p.name} ${Math.round(rssMb(p.child.pid!))} MB`).join(', ')} -> ${step.ok ? 'sustained' : 'NOT sustained'}`,
  );
  for (const p of service) console.log(`  ${p.name} threads: ${threadShares(a, b, p.name).map(([t, s]) => `${t} ${pct(s)}`).join(', ')}`);
  return step;
}

let best: Step | undefined;
/** The sustained step before `best`: the CPU between the two is what more trades cost. */
let belowBest: Step | undefined;
for (const target of steps) {
  const step = await runStep(target);
  if (!step.ok) break;
  belowBest = best;
  best = step;
}
const sustainedRate = best?.target ?? steps[0]!;

// The API at the sustained rate: 64 connections over the three cached routes.
await setRate(sustainedRate);
const apiRun = (duration: number) =>
  autocannon({
    url: apiUrl,
    connections: 64,
    duration,
    headers: { 'x-api-key': apiKey },
    requests: [{ path: '/v1/prices?ids=bitcoin,ethereum' }, { path: '/v1/coins' }, { path: '/v1/coins/bitcoin/ohlc?interval=1m' }],
  });
// Warm-up: the first requests build the cached responses; what is measured is the API serving them.
await apiRun(2);
const apiFrom = Date.now();
const apiLoad = await apiRun(apiSeconds);
const apiErrors = apiLoad.errors + apiLoad.timeouts + apiLoad.non2xx;
const apiLoop = apiUrl === aggregateUrl ? `; ${loopDelays(apiFrom, Date.now())}` : '';
console.log(`API at ${sustainedRate} trades/s, 64 connections, ${apiSeconds} s: ${Math.round(apiLoad.requests.average)} req/s, p50 ${apiLoad.latency.p50} ms, p99 ${apiLoad.latency.p99} ms, errors ${apiErrors}${apiLoop}`);

// A burst: trades x factor for burstSeconds, then how long until every trade of it is stored.
await post('/burst', { factor: burstFactor, seconds: burstSeconds });
await sleep(burstSeconds * 1000);
const atBurstEnd = await sent();
const burstEnd = Date.now();
let caughtUpMs: number | undefined;
while (Date.now() - burstEnd < 120_000) {
  if ((scrapes.at(-1)?.stored ?? 0) >= atBurstEnd.trades) {
    caughtUpMs = scrapes.at(-1)!.at - burstEnd;
    break;
  }
  await sleep(scrapeMs);
}
console.log(`burst: trades x${burstFactor} for ${burstSeconds} s at ${sustainedRate} trades/s: ${caughtUpMs === undefined ? 'NOT caught up within 120 s' : `caught up ${(caughtUpMs / 1000).toFixed(1)} s after it ended`}`);

// Nothing more sent: wait for the store to settle, then count what never arrived.
await setRate(0);
let final = await sent();
let settled = 0;
while (settled < 5_000 && (scrapes.at(-1)?.stored ?? 0) < final.trades) {
  const before = scrapes.at(-1)?.stored;
  await sleep(1_000);
  settled = scrapes.at(-1)?.stored === before ? settled + 1_000 : 0;
}
final = await sent();
const finalMetrics = await serviceMetrics();
const ingestMetrics = finalMetrics.ingest;
const stored = scrapes.at(-1)!.stored;
const lost = final.trades - stored;
for (const v of venues) {
  const collected = metric(ingestMetrics, 'mds_venue_trades_total', `venue="${v}"`);
  console.log(`  ${v}: sent ${final.perVenue[v]?.trades} trades, ${final.perVenue[v]?.books} book msgs; collector published ${collected} trades, resyncs ${metric(ingestMetrics, 'mds_venue_resyncs_total', `venue="${v}"`)}`);
}
// What was lost was either refused by the bus (counted there) or never read off the sockets (the generator's slow-client bound).
console.log(`lost ${lost} trades: bus refused ${busDropped(finalMetrics)} events in all; the generator dropped ${final.droppedClients} slow clients`);
scraping = false;
await scraper;

// Bytes per trade on disk and the raw insert ceiling, on the store the service used (once it has stopped, for chDB).
for (const p of service) await stop(p);
await stop(loadgen);
const store: Store = await openStore(loadConfig(kafka ? serviceEnv : { ...serviceEnv, CLICKHOUSE_URL: undefined }));
const [parts] = await store.rows<{ rows: number; bytes: number }>(
  "SELECT sum(rows) AS rows, sum(bytes_on_disk) AS bytes FROM system.parts WHERE database = currentDatabase() AND table = 'trades' AND active",
);
const ceilingTrades = sampleTrades(venues, markets, 50_000).map((t) => ({ ...t, venue: `ceiling-${t.venue}` }));
await timeRawInsert(store, ceilingTrades.slice(0, 20_000), 10_000, 'capacity-warm');
// Its CPU too: chDB's threads are this process's, the ClickHouse front's its own.
const front = procs.find((p) => p.name === 'clickhouse front');
const frontCpu = () => (front ? cpuOf(front.child.pid!).total : 0);
const [cpuBefore, frontBefore] = [process.cpuUsage(), frontCpu()];
const insertCeiling = ceilingTrades.length / (await timeRawInsert(store, ceilingTrades, 10_000, 'capacity-raw'));
const ceilingCpu = process.cpuUsage(cpuBefore);
const insertMicrosPerRow = ((ceilingCpu.user + ceilingCpu.system) / 1e6 + frontCpu() - frontBefore) * 1e6 / ceilingTrades.length;
await store.close();
for (const p of procs) await stop(p);
rmSync(dataDir, { recursive: true, force: true });

const sustained = best ?? { tradesPerSecond: 0, messagesPerSecond: 0, p50: Number.NaN, p99: Number.NaN };
console.log(`bare ceilings: JSON.parse of the same frames (${Math.round(frameBytes)} B avg) on one core ${Math.round(parseCeiling)} msg/s; raw chDB insert of the same trades ${Math.round(insertCeiling)} rows/s`);
console.log(
  `sustained: ${Math.round(sustained.tradesPerSecond)} trades/s (${(sustained.tradesPerSecond / insertCeiling).toFixed(2)} of the raw insert), ${Math.round(sustained.messagesPerSecond)} msg/s (${(sustained.messagesPerSecond / parseCeiling).toFixed(2)} of JSON.parse alone); lag p50 ${sustained.p50} ms, p99 ${sustained.p99} ms`,
);
if (best) {
  const coresOf = (step: Step) => [...step.cores.values()].reduce((x, y) => x + y, 0);
  const cores = coresOf(best);
  const perProcess = [...best.cores].map(([name, c]) => `${name} ${c.toFixed(2)}`).join(', ');
  const average = (cores * 1e6) / best.tradesPerSecond;
  // A trade more costs what the CPU grew by between the last two sustained steps; the rest is spent
  // whatever the rate (timers, the index runner, merges). With one step, the average stands for it.
  const marginal = belowBest ? ((cores - coresOf(belowBest)) * 1e6) / (best.tradesPerSecond - belowBest.tradesPerSecond) : average;
  const fixed = cores - (best.tradesPerSecond * marginal) / 1e6;
  const most = best.tradesPerSecond + ((cpus().length - cores) * 1e6) / marginal;
  console.log(
    `CPU at the sustained step: ${cores.toFixed(2)} cores (${perProcess}), ${Math.round(average)} µs per trade; ` +
      `${Math.round(marginal)} µs per trade more${belowBest ? ` (from the step before), ${fixed.toFixed(2)} cores whatever the rate` : ' (one sustained step: the average)'}; ` +
      `the raw insert alone ${Math.round(insertMicrosPerRow)} µs per row; ${cpus().length} cores at that: at most ${Math.round(most)} trades/s`,
  );
}
console.log(`on disk: ${parts ? (Number(parts.bytes) / Number(parts.rows)).toFixed(1) : '?'} bytes per trade (${parts?.rows} trades, system.parts)`);
console.log(`capacity: ${Math.round(sustained.tradesPerSecond)} trades/s, ${Math.round(sustained.messagesPerSecond)} msg/s, lag p99 ${sustained.p99} ms, lost ${lost}, api p99 ${apiLoad.latency.p99} ms`);
process.exit(0);
