// The universe demo as the benches start it: `npm run demo`'s command (roleCommand) on a data
// directory of the bench's, 1 day of SIMULATED history, a known API key and a quota no bench reaches.
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { metricSum } from '../soak.ts';
import { freeLoopbackPort } from '../support/ports.ts';
import { roleCommand } from '../support/roleCommand.ts';
import { stopChild } from '../support/stopChild.ts';

/** The demo's API key in the benches (DEMO_API_KEY). */
export const benchKey = 'mds_marketBench0123456789abcdefghijk';

/** Log lines of the demo's kept to tell why it stopped, when it stops on its own. */
const keptLogLines = 30;

/**
 * Starts the demo with `universeAssets` synthetic assets beside the catalog's (0: the catalog's
 * alone) on `port`, and resolves once `/v1/coins` answers 200. Its log (stdout) is not shown, but
 * its errors (level 50 and up) go to stderr as they come, and if it exits before `stopDemo` asks,
 * its exit and its last log lines do: a demo that died had said nothing to a bench.
 */
export async function startDemo(dir: string, port: number, universeAssets: number): Promise<ChildProcess> {
  const demo = roleCommand('demo', [], {
    ...process.env, MDS_DATA_DIR: dir, PORT: String(port), SQL_PORT: String(await freeLoopbackPort()), DEMO_API_KEY: benchKey, QUOTA_PER_HOUR: '10000000',
    DEMO_HISTORY_DAYS: '1', DEMO_UNIVERSE_ASSETS: String(universeAssets), LOG_LEVEL: 'warn',
  });
  const child = spawn(process.execPath, demo.argv, { env: demo.env, stdio: ['ignore', 'pipe', 'inherit'] });
  const lastLines = keepLogTail(child);
  const exited = new Promise<string>((resolve) => child.once('exit', (code, signal) => resolve(`the demo exited (code ${code}, signal ${signal})`)));
  void exited.then((how) => {
    if (!stopping.has(child)) process.stderr.write(`${how} before the bench stopped it; its last log lines:\n${lastLines().join('\n')}\n`);
  });
  const coins = `http://127.0.0.1:${port}/v1/coins?limit=1`;
  for (let i = 0; i < 600 && child.exitCode === null && child.signalCode === null; i++) {
    // A demo that accepts and never answers must not hold the bench: each try waits 5 s at most.
    const status = await fetch(coins, { headers: { 'x-api-key': benchKey }, signal: AbortSignal.timeout(5_000) }).then((r) => r.status, () => 0);
    if (status === 200) return child;
    await sleep(1_000);
  }
  if (child.exitCode !== null || child.signalCode !== null) throw new Error(`${await exited} before it answered /v1/coins`);
  child.kill('SIGKILL');
  throw new Error(`the demo (${universeAssets} universe assets) did not answer /v1/coins within 10 minutes`);
}

/** Demos that stopDemo is stopping: their exit is asked for. */
const stopping = new WeakSet<ChildProcess>();

/** Reads the child's log lines as they come: errors (pino level 50 and up) to stderr, the last `keptLogLines` kept. */
function keepLogTail(child: ChildProcess): () => string[] {
  const lines: string[] = [];
  createInterface({ input: child.stdout! }).on('line', (line) => {
    lines.push(line);
    if (lines.length > keptLogLines) lines.shift();
    if (logLevelOf(line) >= 50) process.stderr.write(`demo: ${line}\n`);
  });
  return () => [...lines];
}

/** A pino line's level (0 for a line that is not one). */
export function logLevelOf(line: string): number {
  const level = /^\{"level":(\d+)/.exec(line)?.[1];
  return level === undefined ? 0 : Number(level);
}

/** Stops the demo with SIGTERM and waits for it to exit. */
export async function stopDemo(child: ChildProcess): Promise<void> {
  stopping.add(child);
  await stopChild(child);
}

/**
 * The least-squares slope of samples, units a minute: the RSS swings by tens of MB from one sample
 * to the next (collections, merges), so the first and last samples alone say little.
 */
export function slopePerMinute(samples: readonly { at: number; value: number }[]): number {
  return slopeWithMarginPerMinute(samples).slope;
}

/** Student's t, two-sided 95 %, for 1-30 degrees of freedom (any statistics table). */
const student95 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.16, 2.145, 2.131, 2.12, 2.11, 2.101, 2.093, 2.086, 2.08, 2.074, 2.069, 2.064, 2.06, 2.056, 2.052, 2.048, 2.045, 2.042];
/** Student's t, two-sided 95 %; past the table 1.96 + 2.4 / df, within 0.3 % of it. */
const studentT95 = (degrees: number): number => student95[degrees - 1] ?? 1.96 + 2.4 / degrees;

/**
 * The least-squares slope, units a minute, and its 95 % margin (Student's t times the slope's
 * standard error, from the samples' scatter about the line); the margin is NaN under 3 samples. The
 * RSS's samples are not independent (a collection's sawtooth spans several), so the margin is if
 * anything narrow.
 */
export function slopeWithMarginPerMinute(samples: readonly { at: number; value: number }[]): { slope: number; margin: number } {
  if (samples.length < 2) return { slope: NaN, margin: NaN };
  const meanAt = samples.reduce((sum, s) => sum + s.at, 0) / samples.length;
  const meanValue = samples.reduce((sum, s) => sum + s.value, 0) / samples.length;
  const covariance = samples.reduce((sum, s) => sum + (s.at - meanAt) * (s.value - meanValue), 0);
  const variance = samples.reduce((sum, s) => sum + (s.at - meanAt) ** 2, 0);
  const slopePerMs = covariance / variance;
  if (samples.length < 3) return { slope: slopePerMs * 60_000, margin: NaN };
  const squaredResiduals = samples.reduce((sum, s) => sum + (s.value - meanValue - slopePerMs * (s.at - meanAt)) ** 2, 0);
  const standardError = Math.sqrt(squaredResiduals / (samples.length - 2) / variance);
  return { slope: slopePerMs * 60_000, margin: studentT95(samples.length - 2) * standardError * 60_000 };
}

/**
 * A slope against the most it may be: PASS when the whole 95 % interval is under it, FAIL when the
 * whole interval is over it, and NOT SHOWN when the interval holds the bound (the run too short
 * or too noisy to tell).
 */
export function slopeVerdict(slope: { slope: number; margin: number }, bound: number): 'PASS' | 'FAIL' | 'NOT SHOWN' {
  if (!Number.isFinite(slope.slope) || !Number.isFinite(slope.margin)) return 'NOT SHOWN';
  if (slope.slope + slope.margin < bound) return 'PASS';
  if (slope.slope - slope.margin > bound) return 'FAIL';
  return 'NOT SHOWN';
}

/** The q-quantile of `values` (the nearest rank at or below); NaN for none. */
export function quantile(values: readonly number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
}

/** The index lag (mds_index_lag_seconds) in a /metrics text; undefined until the index has computed a second (the gauge is absent then). */
export function indexLagOf(metrics: string): number | undefined {
  return /^mds_index_lag_seconds /m.test(metrics) ? metricSum(metrics, 'mds_index_lag_seconds') : undefined;
}

/** One figure of each thread's heap (`mds_thread_heap_bytes`, its `kind`: total, used, external, malloced), MB, from a /metrics text. */
export function threadHeapsMbOf(metrics: string, kind: string): Record<string, number> {
  const heaps: Record<string, number> = {};
  for (const m of metrics.matchAll(/^mds_thread_heap_bytes\{thread="([^"]+)",kind="([^"]+)"\} (\S+)$/gm)) if (m[2] === kind) heaps[m[1]!] = Number(m[3]) / 2 ** 20;
  return heaps;
}

/**
 * The wait between two index-lag samples, 0.5-1.5 s at random: the lag is a sawtooth over each
 * second (it drops once a second is computed), and a sampler locked to the second sees one point of it.
 */
export const lagSampleWaitMs = (): number => 500 + Math.random() * 1_000;

/** A histogram's cumulative buckets in a /metrics text (`name`_bucket lines whose labels include `labels`), by upper bound, ascending. */
export function histogramBucketsOf(metrics: string, name: string, labels = ''): { le: number; count: number }[] {
  const buckets = new Map<number, number>();
  for (const m of metrics.matchAll(new RegExp(`^${name}_bucket\\{([^}]*)\\} (\\S+)$`, 'gm'))) {
    const le = /(?:^|,)le="([^"]+)"/.exec(m[1]!)?.[1];
    if (le === undefined || !m[1]!.replace(/(?:^|,)le="[^"]+"/, '').includes(labels)) continue;
    const bound = le === '+Inf' ? Infinity : Number(le);
    buckets.set(bound, (buckets.get(bound) ?? 0) + Number(m[2]));
  }
  return [...buckets].map(([le, count]) => ({ le, count })).sort((a, b) => a.le - b.le);
}

/**
 * The upper bound of the bucket the `q` quantile falls in, over the observations between two
 * readings of one histogram (`before` may be empty: from the start); NaN with none.
 */
export function histogramQuantileBetween(before: readonly { le: number; count: number }[], after: readonly { le: number; count: number }[], q: number): number {
  const earlier = new Map(before.map((b) => [b.le, b.count]));
  const counts = after.map((b) => ({ le: b.le, count: b.count - (earlier.get(b.le) ?? 0) }));
  const total = counts.at(-1)?.count ?? 0;
  if (total <= 0) return NaN;
  return counts.find((b) => b.count >= q * total)!.le;
}
