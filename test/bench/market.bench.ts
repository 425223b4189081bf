// Issue 25's targets for the whole market, on the demo as a user runs it: `npm run demo` listing the
// simulator's universe (DEMO_UNIVERSE_ASSETS synthetic assets beside the catalog's) and, as the
// baseline measured in the same run, the demo with the catalog's assets alone. Each on a fresh data
// directory (1 day of SIMULATED history), after a warm-up, for `--minutes`: the index lag
// (mds_index_lag_seconds) about every second, at random moments; /ready, what the bus refused
// (mds_bus_dropped_total) and the process's RSS every 5th sample; then every page of 250 of
// /v1/coins, uncached, and /v1/prices for every asset, uncached, three times; then every page 8
// times again, cached, and the API at 64 connections (autocannon, on the same machine, in 4 bursts)
// over cached routes while it ingests. Prints each target with both figures and PASS or FAIL.
// The answers' floor on this machine, measured in the same run: a bare node:http server in a process
// of its own (bareServer.ts) serving the bytes the demo answered, compressed as the API compresses
// them, asked in turn with the demo (each cached page of one, then of the other; autocannon's bursts
// likewise), so that both meet the same moments of the demo, which goes on ingesting.
//   node test/bench/market.bench.ts [--assets 2000] [--minutes 5] [--warmup 60]
// A new listing priced within 5 minutes is checked by test/discovery.system.test.ts, not timed here.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { setTimeout as sleep } from 'node:timers/promises';
import { metricSum } from '../soak.ts';
import { rssMbOf } from '../soakService.ts';
import { freeLoopbackPort } from '../support/ports.ts';
import { stopChild } from '../support/stopChild.ts';
import { benchKey as key, indexLagOf, lagSampleWaitMs, quantile, slopePerMinute, startDemo, stopDemo } from './benchDemo.ts';
import { spawnReporting } from './reportingChild.ts';

const bareServerTs = fileURLToPath(new URL('./bareServer.ts', import.meta.url));

interface Figures {
  assets: number;
  indexLagP99S: number;
  readySamples: number;
  readyFailed: number;
  busDropped: number;
  rssEndMb: number;
  rssSlopeMbPerMin: number;
  coinsPages: number;
  coinsUncachedMaxMs: number;
  coinsCachedP99Ms: number;
  pricesUncachedMaxMs: number;
  /** autocannon at 64 connections over cached routes while the demo ingests (the client on the same machine). */
  apiP99Ms: number;
  apiP50Ms: number;
  apiRequestsPerS: number;
  apiErrors: number;
  /** The same askings of the bare server (bareServer.ts) serving the same bytes, in turn with the demo's. */
  floor: { coinsCachedP99Ms: number; apiP99Ms: number; apiP50Ms: number; apiRequestsPerS: number; apiErrors: number };
}

/** The API under load: connections, seconds measured (after a warm-up that builds the cached answers), and the routes asked in turn. */
const apiLoad = { connections: 64, seconds: 20, bursts: 4, paths: ['/v1/prices?ids=bitcoin,ethereum', '/v1/coins?limit=250&page=1', '/v1/coins/bitcoin/ohlc?interval=1m', '/v1/global'] };

/** How many times each /v1/coins page is asked again once cached. */
const cachedAskings = 8;

/** What autocannon's bursts against one server gave, gathered over all of them. */
interface Load {
  /** Each answer's time (autocannon's responseTime). */
  latencies: number[];
  seconds: number;
  errors: number;
}

const emptyLoad = (): Load => ({ latencies: [], seconds: 0, errors: 0 });

/** autocannon at `apiLoad.connections` over `apiLoad.paths` for `seconds`; its answers are added to `load` when one is given. */
async function cannon(url: string, seconds: number, load?: Load): Promise<void> {
  const options = { url, connections: apiLoad.connections, duration: seconds, headers: { 'x-api-key': key }, requests: apiLoad.paths.map((path) => ({ path })) };
  const result = await new Promise<autocannon.Result>((resolve, reject) => {
    const run = autocannon(options, (err, done) => (err ? reject(err) : resolve(done)));
    if (load) run.on('response', (_client, _status, _bytes, ms) => load.latencies.push(ms));
  });
  if (!load) return;
  load.seconds += result.duration;
  load.errors += result.errors + result.timeouts + result.non2xx;
}

async function timedGet(url: string): Promise<{ ms: number; status: number; body: unknown; text: string }> {
  const started = performance.now();
  const res = await fetch(url, { headers: { 'x-api-key': key } });
  const text = await res.text();
  const ms = performance.now() - started;
  return { ms, status: res.status, body: res.headers.get('content-type')?.includes('json') ? JSON.parse(text) : text, text };
}

/** The bare server (bareServer.ts) answering each path with the text given; stopped by its `stop`. */
async function startBareServer(dir: string, bodies: ReadonlyMap<string, string>): Promise<{ url: string; stop: () => Promise<void> }> {
  const file = join(dir, 'bare-bodies.json');
  writeFileSync(file, JSON.stringify(Object.fromEntries(bodies)));
  const { child, report: { url } } = await spawnReporting<{ url: string }>([bareServerTs, file], 'the bare server');
  const stop = async () => void (await stopChild(child));
  return { url, stop };
}

async function measure(universeAssets: number, minutes: number, warmupS: number): Promise<Figures> {
  const dir = mkdtempSync(join(tmpdir(), 'mds-market-bench-'));
  const port = await freeLoopbackPort();
  const base = `http://127.0.0.1:${port}`;
  const child = await startDemo(dir, port, universeAssets);
  try {
    process.stderr.write(`market bench: ${universeAssets} universe assets: up, warming up ${warmupS} s\n`);
    await sleep(warmupS * 1_000);
    const lags: number[] = [];
    const rss: { at: number; value: number }[] = [];
    let readyFailed = 0;
    let droppedFrom: number | undefined;
    let droppedTo = 0;
    const until = Date.now() + minutes * 60_000;
    // The lag about every second, at random moments (lagSampleWaitMs; a p99 of 5-s samples would be
    // their maximum), /ready and the RSS every 5th sample.
    for (let tick = 0; Date.now() < until; tick++) {
      const metrics = await fetch(`${base}/metrics`).then((r) => r.text());
      const lag = indexLagOf(metrics);
      if (lag !== undefined) lags.push(lag);
      const dropped = metricSum(metrics, 'mds_bus_dropped_total');
      droppedFrom ??= dropped;
      droppedTo = dropped;
      if (tick % 5 === 0) {
        if ((await fetch(`${base}/ready`)).status !== 200) readyFailed += 1;
        rss.push({ at: Date.now(), value: rssMbOf(child.pid) ?? NaN });
      }
      await sleep(lagSampleWaitMs());
    }
    const half = rss.filter((r) => r.at >= rss[0]!.at + (minutes * 60_000) / 2);
    const slope = slopePerMinute(half);

    // Every page of /v1/coins, uncached (the first asking); its bytes are what the bare server serves.
    const uncached: number[] = [];
    const bodies = new Map<string, string>();
    const pagePaths: string[] = [];
    for (let page = 1; ; page++) {
      const path = `/v1/coins?limit=250&page=${page}`;
      const first = await timedGet(base + path);
      uncached.push(first.ms);
      bodies.set(path, first.text);
      pagePaths.push(path);
      if (((first.body as { coins?: unknown[] }).coins?.length ?? 0) < 250) break;
    }
    // /v1/prices of every asset: cached 5 s, so each asking 6 s after the last is uncached.
    const prices: number[] = [];
    let assets = 0;
    for (let i = 0; i < 3; i++) {
      const answer = await timedGet(`${base}/v1/prices`);
      prices.push(answer.ms);
      assets = (answer.body as { prices?: unknown[] }).prices?.length ?? 0;
      await sleep(6_000);
    }

    // The cached pages and the API at 64 connections, each asked of the demo and of its floor (the
    // bare server, the same bytes) in turn, so that both meet the same moments of the demo's cycles
    // (its 5 s snapshot, its 30 s page rebuilds) on a machine the demo keeps busy.
    for (const path of apiLoad.paths) bodies.set(path, (await timedGet(base + path)).text);
    const bare = await startBareServer(dir, bodies);
    const urlOf = { demo: base, bare: bare.url };
    // Who is asked first alternates by round: the second of a pair meets the machine the first left.
    const inTurn = (round: number) => (round % 2 === 0 ? (['demo', 'bare'] as const) : (['bare', 'demo'] as const));
    try {
      const cached = { demo: [] as number[], bare: [] as number[] };
      for (let i = 0; i < cachedAskings; i++) {
        for (const path of pagePaths) {
          for (const who of inTurn(i)) cached[who].push((await timedGet(urlOf[who] + path)).ms);
        }
      }
      const loaded = { demo: emptyLoad(), bare: emptyLoad() };
      await cannon(base, 2);
      await cannon(bare.url, 2);
      for (let burst = 0; burst < apiLoad.bursts; burst++) {
        for (const who of inTurn(burst)) await cannon(urlOf[who], apiLoad.seconds / apiLoad.bursts, loaded[who]);
      }
      const apiOf = (load: Load) => ({
        apiP99Ms: quantile(load.latencies, 0.99),
        apiP50Ms: quantile(load.latencies, 0.5),
        apiRequestsPerS: load.latencies.length / load.seconds,
        apiErrors: load.errors,
      });
      return {
        floor: { coinsCachedP99Ms: quantile(cached.bare, 0.99), ...apiOf(loaded.bare) },
        ...apiOf(loaded.demo),
        assets,
        indexLagP99S: quantile(lags, 0.99),
        readySamples: rss.length,
        readyFailed,
        busDropped: droppedTo - (droppedFrom ?? 0),
        rssEndMb: rss.at(-1)?.value ?? NaN,
        rssSlopeMbPerMin: slope,
        coinsPages: uncached.length,
        coinsUncachedMaxMs: Math.max(...uncached),
        coinsCachedP99Ms: quantile(cached.demo, 0.99),
        pricesUncachedMaxMs: Math.max(...prices),
      };
    } finally {
      await bare.stop();
    }
  } finally {
    await stopDemo(child);
    rmSync(dir, { recursive: true, force: true });
  }
}

const { values } = parseArgs({ options: { assets: { type: 'string', default: '2000' }, minutes: { type: 'string', default: '5' }, warmup: { type: 'string', default: '60' } } });
const universeAssets = Number(values.assets);
const minutes = Number(values.minutes);
const warmupS = Number(values.warmup);
const baseline = await measure(0, minutes, warmupS);
const market = await measure(universeAssets, minutes, warmupS);

const targets: { name: string; figure: (f: Figures) => number; unit: string; pass: (v: number) => boolean; target: string }[] = [
  { name: 'assets priced (/v1/prices)', figure: (f) => f.assets, unit: '', pass: () => true, target: '' },
  { name: 'index lag p99', figure: (f) => f.indexLagP99S, unit: 's', pass: (v) => v < 5, target: '< 5 s' },
  { name: `/ready not 200, of ${market.readySamples} samples (baseline ${baseline.readySamples})`, figure: (f) => f.readyFailed, unit: '', pass: (v) => v === 0, target: '0' },
  { name: 'bus refused', figure: (f) => f.busDropped, unit: '', pass: (v) => v === 0, target: '0' },
  { name: 'RSS at the end', figure: (f) => f.rssEndMb, unit: 'MB', pass: (v) => v < 2048, target: '< 2048 MB' },
  { name: 'RSS growth over the second half (least squares; warm-up in a run of minutes: npm run bench:memory measures hours)', figure: (f) => f.rssSlopeMbPerMin, unit: 'MB/min', pass: (v) => v < 10, target: '< 10 MB/min (flat)' },
  { name: '/v1/coins pages of 250', figure: (f) => f.coinsPages, unit: '', pass: () => true, target: '' },
  { name: `/v1/coins page, cached, p99 of ${market.coinsPages * cachedAskings}`, figure: (f) => f.coinsCachedP99Ms, unit: 'ms', pass: (v) => v < 50, target: '< 50 ms' },
  { name: '  the same bytes from the bare server, asked in turn: p99', figure: (f) => f.floor.coinsCachedP99Ms, unit: 'ms', pass: () => true, target: '' },
  { name: '/v1/coins page, uncached, slowest', figure: (f) => f.coinsUncachedMaxMs, unit: 'ms', pass: (v) => v < 1_000, target: '< 1000 ms' },
  { name: '/v1/prices every asset, uncached, slowest', figure: (f) => f.pricesUncachedMaxMs, unit: 'ms', pass: (v) => v < 1_000, target: '< 1000 ms' },
  { name: `API at ${apiLoad.connections} connections while ingesting, requests a second`, figure: (f) => f.apiRequestsPerS, unit: '', pass: () => true, target: '' },
  { name: `API at ${apiLoad.connections} connections, p50`, figure: (f) => f.apiP50Ms, unit: 'ms', pass: () => true, target: '' },
  { name: `API at ${apiLoad.connections} connections, p99 (autocannon on the same 2 cores)`, figure: (f) => f.apiP99Ms, unit: 'ms', pass: (v) => v < 50, target: '< 50 ms' },
  { name: `API at ${apiLoad.connections} connections, errors and non-2xx`, figure: (f) => f.apiErrors, unit: '', pass: (v) => v === 0, target: '0' },
  { name: '  the same bytes from the bare server, asked in turn: requests a second', figure: (f) => f.floor.apiRequestsPerS, unit: '', pass: () => true, target: '' },
  { name: '  the same bytes from the bare server, asked in turn: p50', figure: (f) => f.floor.apiP50Ms, unit: 'ms', pass: () => true, target: '' },
  { name: '  the same bytes from the bare server, asked in turn: p99', figure: (f) => f.floor.apiP99Ms, unit: 'ms', pass: () => true, target: '' },
  { name: '  the same bytes from the bare server, asked in turn: errors', figure: (f) => f.floor.apiErrors, unit: '', pass: (v) => v === 0, target: '0' },
];
const round = (v: number) => (Number.isFinite(v) ? Math.round(v * 10) / 10 : v);
console.log(`market bench: the demo with ${universeAssets} universe assets against the catalog's alone (baseline), ${minutes} min each after ${warmupS} s`);
for (const t of targets) {
  const [b, m] = [t.figure(baseline), t.figure(market)];
  const ratio = b > 0 ? ` (${round(m / b)}x the baseline)` : '';
  const verdict = t.target ? `  target ${t.target}: ${t.pass(m) ? 'PASS' : 'FAIL'}` : '';
  console.log(`  ${t.name}: ${round(m)} ${t.unit}, baseline ${round(b)} ${t.unit}${ratio}${verdict}`);
}
