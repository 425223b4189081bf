// Issue 25's "RSS under 2 GB after 30 minutes and flat", over hours: the universe demo as `npm run
// demo` starts it (benchDemo.ts), with a light user, for `--minutes`. Every minute: the process's
// RSS and its anonymous part (RssAnon), each thread's JavaScript heap held (mds_thread_heap_bytes,
// kind="total") and its memory outside the heap that V8 knows of (external plus malloced), the
// store engine's own count of its memory (mds_store_memory_bytes, part="tracked"), /ready and what
// the bus refused; the index lag at random moments 0.5-1.5 s apart (it is a sawtooth over each
// second). The light user asks /v1/global every 10 s, which keeps the API's market snapshot built,
// and every 20 s one /v1/coins page nobody asked before.
// Prints each window of `--window` minutes (RSS, heaps, the store's memory, outside the heaps, the
// lag, the index's time per live step by part, the steps that outlasted their second, and the
// step's time by whether it read the 24-hour windows again), then the targets: the highest RSS from
// minute `--settle` on under 2048 MB; flat, the least-squares slope from minute `--flat-from` to
// the end small enough that the RSS would stay under 2048 MB for a day more, with its 95 % interval
// (PASS or FAIL only when the whole interval is on one side of that bound; NOT SHOWN when a run
// this long cannot tell), beside the first window's slope (the warm-up, this run's baseline); the
// lag's p99 under 5 s in every window from `--settle` on; nothing refused; /ready 200 from
// `--settle` on. A progress line each minute on stderr; `--samples FILE` keeps every minute's
// sample as a JSON line.
//   node test/bench/demoMemory.bench.ts [--assets 2000] [--minutes 120] [--settle 30] [--flat-from 60] [--window 30] [--samples FILE]
import { appendFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import { metricSum } from '../soak.ts';
import { procStatusMbOf, rssMbOf } from '../soakService.ts';
import { freeLoopbackPort } from '../support/ports.ts';
import { benchKey, histogramBucketsOf, histogramQuantileBetween, indexLagOf, lagSampleWaitMs, quantile, slopePerMinute, slopeVerdict, slopeWithMarginPerMinute, startDemo, stopDemo, threadHeapsMbOf } from './benchDemo.ts';

const mb = 1024 * 1024;
const rssBoundMb = 2048;
/** The day the RSS must stay under its bound at the measured slope, in minutes. */
const flatHorizonMinutes = 24 * 60;

/** One minute's look at the demo. */
interface MemorySample {
  /** Minutes since the demo answered. */
  minute: number;
  at: number;
  rssMb: number;
  /** Each thread's heap held, MB. */
  heapsMb: Record<string, number>;
  /** Each thread's memory outside its heap that V8 knows of (external plus malloced), MB. */
  outsideHeapsMb: Record<string, number>;
  /** The process's anonymous resident memory (RssAnon: heaps, malloc, chDB; not mapped files), MB. */
  rssAnonMb: number;
  storeTrackedMb: number;
  ready: boolean;
  busRefused: number;
  /** The index runner's time so far in each part of its steps (mds_index_phase_seconds_total), s. */
  indexPhaseSeconds: Record<IndexPhaseName, number>;
  /** Live index steps so far (mds_index_live_steps_total). */
  indexLiveSteps: number;
  /** Live index steps so far that outlasted the rest of their second (mds_index_overruns_total). */
  indexOverruns: number;
  /** The live loop's step times so far (mds_index_step_seconds), by whether the step read the 24-hour windows again. */
  indexSteps: Record<'kept' | 'read', { le: number; count: number }[]>;
}

const indexPhases = ['load', 'sweep', 'write'] as const;
type IndexPhaseName = (typeof indexPhases)[number];

/** Each thread's external plus malloced memory, MB. */
function outsideHeapsOf(metrics: string): Record<string, number> {
  const external = threadHeapsMbOf(metrics, 'external');
  const malloced = threadHeapsMbOf(metrics, 'malloced');
  return Object.fromEntries(Object.keys(external).map((thread) => [thread, external[thread]! + (malloced[thread] ?? 0)]));
}

/** The sum of every thread's figure, MB. */
const allThreadsMb = (perThread: Record<string, number>): number => Object.values(perThread).reduce((sum, v) => sum + v, 0);

async function sampleOf(base: string, pid: number | undefined, startedAt: number): Promise<MemorySample> {
  const metrics = await fetch(`${base}/metrics`).then((r) => r.text(), () => '');
  const ready = await fetch(`${base}/ready`).then((r) => r.status === 200, () => false);
  const at = Date.now();
  return {
    minute: (at - startedAt) / 60_000,
    at,
    rssMb: rssMbOf(pid) ?? NaN,
    heapsMb: threadHeapsMbOf(metrics, 'total'),
    outsideHeapsMb: outsideHeapsOf(metrics),
    rssAnonMb: procStatusMbOf(pid, 'RssAnon') ?? NaN,
    storeTrackedMb: metricSum(metrics, 'mds_store_memory_bytes', 'part="tracked"') / mb,
    ready,
    busRefused: metricSum(metrics, 'mds_bus_dropped_total'),
    indexPhaseSeconds: Object.fromEntries(indexPhases.map((phase) => [phase, metricSum(metrics, 'mds_index_phase_seconds_total', `phase="${phase}"`)])) as Record<IndexPhaseName, number>,
    indexLiveSteps: metricSum(metrics, 'mds_index_live_steps_total'),
    indexOverruns: metricSum(metrics, 'mds_index_overruns_total'),
    indexSteps: { kept: histogramBucketsOf(metrics, 'mds_index_step_seconds', 'windows="kept"'), read: histogramBucketsOf(metrics, 'mds_index_step_seconds', 'windows="read"') },
  };
}

/** A light API user until `until`: /v1/global every 10 s, every other time one /v1/coins page never asked before. Returns the pages' times, ms. */
async function lightUser(base: string, until: number): Promise<number[]> {
  const get = async (path: string) => {
    const started = performance.now();
    const res = await fetch(base + path, { headers: { 'x-api-key': benchKey } });
    await res.arrayBuffer();
    return performance.now() - started;
  };
  const pages: number[] = [];
  for (let turn = 1; Date.now() < until; turn++) {
    await get('/v1/global').catch(() => undefined);
    await sleep(10_000);
    // A limit not asked before makes the page uncached (the cache is keyed by the query).
    if (turn % 2 === 0) pages.push(await get(`/v1/coins?limit=${250 - (Math.floor(turn / 2) % 200)}&page=${(turn / 2) % 16 + 1}`).catch(() => NaN));
  }
  return pages;
}

/** The index lag at random moments until `until`, with when each was read. */
async function lagSampler(base: string, until: number): Promise<{ at: number; value: number }[]> {
  const lags: { at: number; value: number }[] = [];
  while (Date.now() < until) {
    const lag = indexLagOf(await fetch(`${base}/metrics`).then((r) => r.text(), () => ''));
    if (lag !== undefined) lags.push({ at: Date.now(), value: lag });
    await sleep(lagSampleWaitMs());
  }
  return lags;
}

const { values } = parseArgs({
  options: {
    assets: { type: 'string', default: '2000' },
    minutes: { type: 'string', default: '120' },
    settle: { type: 'string', default: '30' },
    'flat-from': { type: 'string', default: '60' },
    window: { type: 'string', default: '30' },
    samples: { type: 'string' },
  },
});
const universeAssets = Number(values.assets);
const minutes = Number(values.minutes);
const settle = Number(values.settle);
const flatFrom = Number(values['flat-from']);
const windowMinutes = Number(values.window);
for (const [name, value] of Object.entries({ assets: universeAssets, minutes, settle, 'flat-from': flatFrom, window: windowMinutes })) {
  if (!Number.isFinite(value) || value < 0) throw new Error(`--${name} must be a number of 0 or more, not ${JSON.stringify(values[name as keyof typeof values])}`);
}
if (!(windowMinutes >= 1)) throw new Error(`--window must be 1 minute or more, not ${windowMinutes}`);
if (!(settle <= flatFrom && flatFrom + 2 <= minutes)) throw new Error(`--settle (${settle}) <= --flat-from (${flatFrom}) <= --minutes (${minutes}) - 2 is needed: a slope wants 3 samples at least`);

const dir = mkdtempSync(join(tmpdir(), 'mds-memory-bench-'));
const port = await freeLoopbackPort();
const base = `http://127.0.0.1:${port}`;
const child = await startDemo(dir, port, universeAssets);
const startedAt = Date.now();
const until = startedAt + minutes * 60_000;
const samples: MemorySample[] = [];
let pages: number[] = [];
let lags: { at: number; value: number }[] = [];
try {
  process.stderr.write(`memory bench: the demo with ${universeAssets} universe assets is up; ${minutes} min\n`);
  const user = lightUser(base, until);
  const lagging = lagSampler(base, until);
  for (let minute = 0; minute <= minutes; minute++) {
    await sleep(Math.max(0, startedAt + minute * 60_000 - Date.now()));
    const sample = await sampleOf(base, child.pid, startedAt);
    samples.push(sample);
    if (values.samples) appendFileSync(values.samples, `${JSON.stringify(sample)}\n`);
    const heaps = Object.entries(sample.heapsMb).map(([thread, held]) => `${thread} ${Math.round(held)}`).join(', ');
    const outside = allThreadsMb(sample.outsideHeapsMb);
    process.stderr.write(`memory bench: minute ${minute}: RSS ${Math.round(sample.rssMb)} MB (anonymous ${Math.round(sample.rssAnonMb)}); heaps held ${heaps} MB, outside them ${Math.round(outside)} MB; store ${Math.round(sample.storeTrackedMb)} MB; ready ${sample.ready}\n`);
  }
  [pages, lags] = await Promise.all([user, lagging]);
} finally {
  await stopDemo(child);
  rmSync(dir, { recursive: true, force: true });
}

const between = <T extends { at: number }>(items: readonly T[], from: number, to: number) => items.filter((s) => s.at >= startedAt + from * 60_000 && s.at <= startedAt + to * 60_000);
const rssSlope = (of: readonly MemorySample[]) => slopeWithMarginPerMinute(of.map((s) => ({ at: s.at, value: s.rssMb })));
const slopeOf = (of: readonly MemorySample[], valueOf: (s: MemorySample) => number) => slopePerMinute(of.map((s) => ({ at: s.at, value: valueOf(s) })));
const round = (v: number, digits = 0) => (Number.isFinite(v) ? v.toFixed(digits) : String(v));
const withMargin = (slope: { slope: number; margin: number }) => `${round(slope.slope, 2)} ± ${round(slope.margin, 2)}`;

console.log(`memory bench: the demo with ${universeAssets} universe assets, ${minutes} min, a light API user (${pages.length} uncached /v1/coins pages: median ${round(quantile(pages, 0.5))} ms, slowest ${round(Math.max(...pages))} ms)`);
const threads = Object.keys(samples.at(-1)?.heapsMb ?? {});
console.log(`  minutes | RSS at the end | mean | highest | slope MB/min (± 95 %) | heaps' slopes MB/min (${threads.join(', ')}) | store's slope | anonymous RSS's slope | outside the heaps' slope (all threads) | lag p50 / p99 / highest | index time per live step, ms (${indexPhases.join(' / ')}; catch-ups and revisits included) | live steps that outlasted their second | step p50 / p99 (s, bucket bound), windows kept; p50 / p99, windows read`);
const windows: { from: number; to: number; lagP99: number }[] = [];
for (let from = 0; from < minutes; from += windowMinutes) {
  const to = Math.min(minutes, from + windowMinutes);
  const inWindow = between(samples, from, to);
  const windowLags = between(lags, from, to).map((l) => l.value);
  windows.push({ from, to, lagP99: quantile(windowLags, 0.99) });
  const rss = inWindow.map((s) => s.rssMb);
  // A thread whose heap a scrape missed is left out of that minute.
  const heapSlopes = threads.map((thread) => round(slopePerMinute(inWindow.flatMap((s) => (s.heapsMb[thread] === undefined ? [] : [{ at: s.at, value: s.heapsMb[thread] }]))), 2));
  const storeSlope = slopeOf(inWindow, (s) => s.storeTrackedMb);
  const anonSlope = slopeOf(inWindow, (s) => s.rssAnonMb);
  const outsideSlope = slopeOf(inWindow, (s) => allThreadsMb(s.outsideHeapsMb));
  // Where the lag comes from: a step's time by part, over the live steps the window saw.
  const [first, last] = [inWindow[0], inWindow.at(-1)];
  const steps = first && last ? last.indexLiveSteps - first.indexLiveSteps : 0;
  const stepParts = indexPhases.map((phase) => (first && last && steps > 0 ? round(((last.indexPhaseSeconds[phase] - first.indexPhaseSeconds[phase]) * 1000) / steps) : '-')).join(' / ');
  const overruns = first && last ? last.indexOverruns - first.indexOverruns : 0;
  const overrunShare = steps > 0 ? `${overruns} of ${steps} (${round((100 * overruns) / steps, 1)} %)` : '-';
  const stepQuantiles = (kind: 'kept' | 'read') => [0.5, 0.99].map((q) => (first && last ? round(histogramQuantileBetween(first.indexSteps[kind], last.indexSteps[kind], q), 2) : '-')).join(' / ');
  console.log(`  ${from}-${to} | ${round(rss.at(-1) ?? NaN)} | ${round(rss.reduce((a, b) => a + b, 0) / rss.length)} | ${round(Math.max(...rss))} | ${withMargin(rssSlope(inWindow))} | ${heapSlopes.join(', ')} | ${round(storeSlope, 2)} | ${round(anonSlope, 2)} | ${round(outsideSlope, 2)} | ${round(quantile(windowLags, 0.5), 2)} / ${round(quantile(windowLags, 0.99), 2)} / ${round(Math.max(...windowLags), 2)} s | ${stepParts} | ${overrunShare} | ${stepQuantiles('kept')}; ${stepQuantiles('read')}`);
}

const settled = between(samples, settle, minutes);
const highest = Math.max(...settled.map((s) => s.rssMb));
const flatSamples = between(samples, flatFrom, minutes);
const flatSlope = rssSlope(flatSamples);
const flatMean = flatSamples.reduce((sum, s) => sum + s.rssMb, 0) / flatSamples.length;
// The slope at which the RSS, from its mean over the flat span, reaches the bound a day later.
const flatBound = (rssBoundMb - flatMean) / flatHorizonMinutes;
const hoursToBound = flatSlope.slope > 0 ? (rssBoundMb - flatMean) / flatSlope.slope / 60 : Infinity;
const warmupSlope = rssSlope(between(samples, 0, Math.min(windowMinutes, minutes)));
const refused = (samples.at(-1)?.busRefused ?? 0) - (samples[0]?.busRefused ?? 0);
// The demo answers before its first index second is computed, and is not ready until then.
const notReady = settled.filter((s) => !s.ready).length;
const lagWindows = windows.filter((w) => w.from >= settle);
const worstLag = Math.max(...lagWindows.map((w) => w.lagP99));
const verdict = (pass: boolean) => (pass ? 'PASS' : 'FAIL');
console.log(`  RSS from minute ${settle} on, highest: ${round(highest)} MB  target < ${rssBoundMb} MB: ${verdict(highest < rssBoundMb)}`);
console.log(`  RSS slope from minute ${flatFrom} to ${minutes} (least squares, ${flatSamples.length} samples, mean ${round(flatMean)} MB): ${withMargin(flatSlope)} MB/min (95 %); at it the RSS reaches ${rssBoundMb} MB in ${round(hoursToBound, 1)} h; the first ${windowMinutes} min's slope (warm-up, baseline) ${withMargin(warmupSlope)} MB/min (${round(flatSlope.slope / warmupSlope.slope, 2)}x)  target flat, < ${round(flatBound, 2)} MB/min (${rssBoundMb} MB not reached within 24 h), the whole interval: ${slopeVerdict(flatSlope, flatBound)}`);
console.log(`  index lag p99, worst window from minute ${settle} on: ${round(worstLag, 2)} s  target < 5 s: ${verdict(worstLag < 5)}`);
console.log(`  bus refused: ${refused}  target 0: ${verdict(refused === 0)}`);
console.log(`  /ready not 200 from minute ${settle} on: ${notReady} of ${settled.length}  target 0: ${verdict(notReady === 0)}`);
