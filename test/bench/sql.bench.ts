// npm run bench:sql: what an analyst's long query through the read-only SQL endpoint (infra/sql/)
// does to the service's promises. The whole embedded service (`main.ts all`, SQL_PORT set) against
// the simulator; a steady client asks /v1/prices 10 times a second (on a schedule, whatever the
// answers take) and /metrics is scraped every 200 ms for the live ingest lag (ingestLag.ts: venue
// time to the trade sink's commit). First a window without SQL (the baseline), then a window in
// which a long analytical query runs through the SQL endpoint again and again (each cut by the
// reader's max_execution_time, SQL_MAX_EXECUTION_TIME_S). Both are printed with their ratio,
// against the bound below. SQL_* settings of the environment reach the service (e.g.
// SQL_MAX_THREADS=2 to see what the default of 1 spares).
// --uncached asks for another asset each time, past the 5 s response cache: every request reads the store.
//   npm run bench:sql [-- --window-seconds 40 --rate 20 --venues binance,coinbase,okx --sql-clients 1 --uncached --query "SELECT ..." --keep]
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import { catalogAssets } from '../../infra/catalog/catalog.ts';
import type { SimulatedVenueId } from '../../simulator/simulator.ts';
import { startSimulator } from '../../simulator/simulator.ts';
import { prepareStore, serviceEnv } from '../soak.ts';
import { SoakService } from '../soakService.ts';
import { freeLoopbackPort } from '../support/ports.ts';
import { lagsMs, percentile, pipelineCounts, type PipelineScrape } from './ingestLag.ts';

/**
 * The analyst's query: every trade the service holds, crossed with 100,000 numbers, grouped per
 * market with a distinct count, a quantile and sums. It reads the live `trades` table while the
 * sinks insert into it, and runs until the reader's time limit cuts it (TIMEOUT_EXCEEDED, 159).
 */
const defaultQuery = `SELECT t.venue, t.market, count() AS rows, sum(t.price * t.quantity * (1 + n.number % 7)) AS notional,
       uniq(t.trade_id, n.number % 1000) AS ids, quantile(0.99)(t.price + n.number % 13) AS p99
FROM trades AS t CROSS JOIN numbers(100000) AS n
GROUP BY t.venue, t.market ORDER BY notional DESC`;

const { values: args } = parseArgs({
  options: {
    'window-seconds': { type: 'string', default: '40' },
    'warm-seconds': { type: 'string', default: '10' },
    rate: { type: 'string', default: '20' },
    venues: { type: 'string', default: 'binance,coinbase,okx' },
    tickers: { type: 'string', default: 'BTC,ETH,SOL' },
    'requests-per-second': { type: 'string', default: '10' },
    'sql-clients': { type: 'string', default: '1' },
    uncached: { type: 'boolean', default: false },
    query: { type: 'string', default: defaultQuery },
    keep: { type: 'boolean', default: false },
  },
});
const windowMs = Number(args['window-seconds']) * 1_000;
const warmMs = Number(args['warm-seconds']) * 1_000;
const rate = Number(args.rate);
const venues = args.venues.split(',') as SimulatedVenueId[];
const requestsPerSecond = Number(args['requests-per-second']);
const sqlClients = Number(args['sql-clients']);
const scrapeMs = 200;

/**
 * The bound: with the long query running, /v1/prices p99 at most twice its p99 without it (a
 * baseline under 10 ms counts as 10 ms: a few ms more is no user's concern), and the ingest lag's
 * p99 under 5 s (the index price is `measured` while its last trade is at most INDEX_STALE_AFTER_MS,
 * 15 s by default, old: 5 s leaves it room).
 */
const bound = { apiP99Ratio: 2, apiBaselineFloorMs: 10, lagP99Ms: 5_000 };

/** ClickHouse's TIMEOUT_EXCEEDED: the reader's time limit cut the query. */
const timeLimitCode = '159';

/** One /v1/prices request: when it started, how long it took, whether it answered 200. */
interface Sample {
  at: number;
  ms: number;
  ok: boolean;
}

/** One analytical query: when it ran and how it ended (200, or ClickHouse's exception code). */
interface SqlRun {
  from: number;
  to: number;
  status: number;
  code: string | null;
}

/** CPU seconds the process has used (user + system), from /proc; undefined once it is gone. */
function cpuSeconds(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    // Fields after the command's closing parenthesis: state is the 3rd field of the line, utime the 14th, stime the 15th.
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return undefined;
  }
}

/** CPU seconds every core of the machine has been busy (all processes: others' work shows here), from /proc/stat. */
function machineBusySeconds(): number {
  const [, ...ticks] = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).map(Number);
  // user nice system idle iowait irq softirq steal ...: all but idle and iowait are busy.
  return (ticks.reduce((a, b) => a + b, 0) - ticks[3]! - ticks[4]!) / 100;
}

/**
 * Asks `urlOf(i)` for the i-th request on a fixed schedule from now until `stop()` says so, each
 * request timed on its own.
 */
function steadyClient(urlOf: (i: number) => string, key: string, perSecond: number, stop: () => boolean): Promise<Sample[]> {
  const samples: Sample[] = [];
  const inFlight = new Set<Promise<void>>();
  const ask = async (url: string) => {
    const at = Date.now();
    const started = performance.now();
    const ok = await fetch(url, { headers: { 'x-api-key': key }, signal: AbortSignal.timeout(10_000) }).then(
      async (res) => (await res.arrayBuffer(), res.status === 200),
      () => false,
    );
    samples.push({ at, ms: performance.now() - started, ok });
  };
  return (async () => {
    const start = Date.now();
    for (let i = 0; !stop(); i++) {
      await sleep(Math.max(0, start + (i * 1_000) / perSecond - Date.now()));
      const request = ask(urlOf(i)).finally(() => inFlight.delete(request));
      inFlight.add(request);
    }
    await Promise.all(inFlight);
    return samples;
  })();
}

/** Runs `query` through the SQL endpoint again and again until `stop()`, each run's end recorded. */
async function analyst(url: string, password: string, query: string, stop: () => boolean): Promise<SqlRun[]> {
  const runs: SqlRun[] = [];
  const auth = `Basic ${Buffer.from(`reader:${password}`).toString('base64')}`;
  while (!stop()) {
    const from = Date.now();
    const res = await fetch(`${url}/`, { method: 'POST', body: query, headers: { authorization: auth }, signal: AbortSignal.timeout(300_000) });
    await res.arrayBuffer();
    runs.push({ from, to: Date.now(), status: res.status, code: res.headers.get('x-clickhouse-exception-code') });
  }
  return runs;
}

const say = (line: string) => process.stdout.write(`sql: ${line}\n`);
const ms = (n: number) => (Number.isFinite(n) ? n.toFixed(n < 100 ? 1 : 0) : 'n/a');
const loadAverage = () => loadavg().map((l) => l.toFixed(2)).join(' ');

/** p50/p99/max of the /v1/prices samples started in [from, to), and how many failed. */
function apiFigures(samples: readonly Sample[], from: number, to: number) {
  const inWindow = samples.filter((s) => s.at >= from && s.at < to);
  const latencies = inWindow.map((s) => s.ms);
  return { p50: percentile(latencies, 50), p99: percentile(latencies, 99), max: percentile(latencies, 100), count: inWindow.length, failed: inWindow.filter((s) => !s.ok).length };
}

function lagFigures(scrapes: readonly PipelineScrape[], from: number, to: number) {
  const lags = lagsMs(scrapes, from, to);
  return { p50: percentile(lags, 50), p99: percentile(lags, 99), max: percentile(lags, 100), seconds: lags.length };
}

const dataDir = mkdtempSync(join(tmpdir(), 'mds-sql-bench-'));
const keySecret = randomBytes(32).toString('hex');
const sqlPassword = randomBytes(18).toString('base64url');
const key = await prepareStore(dataDir, keySecret);
const simulator = await startSimulator({ seed: 5, venues, tickers: args.tickers.split(','), tradesPerSecondPerMarket: rate, tickMs: 100 });
const port = await freeLoopbackPort();
const sqlPort = await freeLoopbackPort();
const env = { ...serviceEnv(simulator, { busMaxRecordsPerTopic: 100_000 }, port, dataDir, keySecret), SQL_PORT: String(sqlPort), SQL_PASSWORD: sqlPassword };
const service = new SoakService({ port, env, venues, logFile: join(dataDir, 'service.log') });
const sqlUrl = `http://127.0.0.1:${sqlPort}`;

const scrapes: PipelineScrape[] = [];
let running = true;
const scraper = (async () => {
  while (running) {
    const text = await fetch(`${service.base}/metrics`, { signal: AbortSignal.timeout(2_000) }).then((r) => r.text(), () => undefined);
    if (text !== undefined) scrapes.push({ at: Date.now(), ...pipelineCounts(text) });
    await sleep(scrapeMs);
  }
})();

let failed = true;
try {
  await service.start();
  await service.untilMeasured(key);
  const sqlLimits = Object.entries(env).filter(([name]) => /^SQL_(MAX|PORT)/.test(name));
  say(`all role, ${venues.join(',')} x ${args.tickers} at ${rate} trades/s per market; /v1/prices ${requestsPerSecond}/s${args.uncached ? ' (each past the response cache)' : ''}; ${sqlClients} SQL client(s); ${sqlLimits.map(([n, v]) => `${n}=${v}`).join(' ') || 'SQL_* defaults'} (SQL_MAX_THREADS default 1, SQL_MAX_EXECUTION_TIME_S 30); data ${dataDir}`);
  say(`load average at start ${loadAverage()}`);
  let apiDone = false;
  // --uncached: bitcoin and one more asset, another each time, so that each request misses the response cache and reads the store.
  const pricesUrl = (i: number) => `${service.base}/v1/prices${args.uncached ? `?ids=bitcoin,${catalogAssets[1 + (i % (catalogAssets.length - 1))]!.id}` : ''}`;
  const api = steadyClient(pricesUrl, key, requestsPerSecond, () => apiDone);
  await sleep(warmMs);

  const baseFrom = Date.now();
  const baseCpu = cpuSeconds(service.pid);
  const baseBusy = machineBusySeconds();
  await sleep(windowMs);
  const loadFrom = Date.now();
  const loadCpu = cpuSeconds(service.pid);
  const loadBusy = machineBusySeconds();
  let sqlDone = false;
  const analysts = Array.from({ length: sqlClients }, () => analyst(sqlUrl, sqlPassword, args.query, () => sqlDone));
  await sleep(windowMs);
  const loadTo = Date.now();
  const endCpu = cpuSeconds(service.pid);
  const endBusy = machineBusySeconds();
  const loadAverageAtEnd = loadAverage();
  apiDone = true;
  sqlDone = true;
  const samples = await api;
  // The query running when the window closed runs to its end (chDB cannot stop it early).
  const runs = (await Promise.all(analysts)).flat().sort((a, b) => a.from - b.from);
  running = false;
  await scraper;

  const apiBase = apiFigures(samples, baseFrom, loadFrom);
  const apiLoad = apiFigures(samples, loadFrom, loadTo);
  // The lag of a second is known once its trades are committed: the last seconds of a window may be left out.
  const lagBase = lagFigures(scrapes, baseFrom, loadFrom);
  const lagLoad = lagFigures(scrapes, loadFrom, loadTo);
  const apiRatio = apiLoad.p99 / Math.max(apiBase.p99, bound.apiBaselineFloorMs);
  const cores = (from: number | undefined, to: number | undefined) => (from !== undefined && to !== undefined ? ((to - from) / (windowMs / 1_000)).toFixed(2) : 'n/a');
  const ended = new Map<string, number>();
  for (const r of runs) ended.set(r.code ?? String(r.status), (ended.get(r.code ?? String(r.status)) ?? 0) + 1);
  // A query refused or failed at once loads nothing: only answers and the time limit's cuts count as load.
  const refused = runs.filter((r) => r.status !== 200 && r.code !== timeLimitCode);
  const seconds = runs.map((r) => (r.to - r.from) / 1000);
  say(`query: ${args.query.replace(/\s+/g, ' ')}`);
  say(`analytical queries: ${runs.length} run, ended ${[...ended].map(([how, n]) => `${how === '200' ? 'answered' : `code ${how}`} x${n}`).join(', ')}; each ${ms(percentile(seconds, 0))}-${ms(percentile(seconds, 100))} s`);
  say(`/v1/prices p50/p99/max without SQL ${ms(apiBase.p50)}/${ms(apiBase.p99)}/${ms(apiBase.max)} ms (${apiBase.count} requests, ${apiBase.failed} failed); with the query ${ms(apiLoad.p50)}/${ms(apiLoad.p99)}/${ms(apiLoad.max)} ms (${apiLoad.count} requests, ${apiLoad.failed} failed); p99 ratio ${(apiLoad.p99 / apiBase.p99).toFixed(2)}, ${apiRatio.toFixed(2)} against a baseline of at least ${bound.apiBaselineFloorMs} ms (bound <= ${bound.apiP99Ratio})`);
  say(`ingest lag p50/p99/max without SQL ${lagBase.p50}/${lagBase.p99}/${lagBase.max} ms over ${lagBase.seconds} s; with the query ${lagLoad.p50}/${lagLoad.p99}/${lagLoad.max} ms over ${lagLoad.seconds} s; p99 ratio ${(lagLoad.p99 / Math.max(lagBase.p99, 1)).toFixed(2)} (bound p99 < ${bound.lagP99Ms} ms)`);
  say(`CPU of the service (its SQL endpoint included) without SQL ${cores(baseCpu, loadCpu)} cores, with the query ${cores(loadCpu, endCpu)}; of the whole machine ${cores(baseBusy, loadBusy)} and ${cores(loadBusy, endBusy)} of ${availableParallelism()}; load average at the end ${loadAverageAtEnd}`);
  failed =
    apiBase.count === 0 || apiLoad.count === 0 || lagBase.seconds === 0 || lagLoad.seconds === 0 || runs.length === 0 || refused.length > 0 ||
    !(apiRatio <= bound.apiP99Ratio) || apiLoad.failed > 0 || !(lagLoad.p99 < bound.lagP99Ms);
  say(failed ? 'FAIL' : 'PASS');
  const code = await service.stop();
  if (code !== 0) throw new Error(`the service exited with ${code} on SIGTERM`);
} finally {
  running = false;
  await scraper;
  if (service.pid !== undefined) await service.stop().catch(() => undefined);
  await simulator.close();
  if (!failed && !args.keep) rmSync(dataDir, { recursive: true, force: true });
}
process.exit(failed ? 1 : 0);
