// THREAD_HEAP_MB bounds every worker thread's heap (infra/roles/workerThread.ts): a thread whose live
// data outgrows it fails, and its process stops with a line that names the setting, instead of
// growing without bound. MAIN_HEAP_MB bounds the main thread's the same way (infra/roles/mainHeap.ts).
// Run in a child process: the failure ends the process it happens in.
import { fileURLToPath } from 'node:url';
import { expect, test } from 'vitest';
import { runModuleScript } from '../../test/support/moduleScript.ts';
import { youngGenerationMb } from '../roles/youngGeneration.ts';

const roles = (file: string) => JSON.stringify(fileURLToPath(new URL(`../roles/${file}`, import.meta.url)));
const infra = (file: string) => JSON.stringify(fileURLToPath(new URL(`../${file}`, import.meta.url)));

/** A worker that says it started and what its heap limit is, then keeps everything it allocates. */
const hungryWorker = `
import { parentPort } from 'node:worker_threads';
import { getHeapStatistics } from 'node:v8';
parentPort.postMessage({ type: 'started' });
parentPort.postMessage({ type: 'heap', limitMb: getHeapStatistics().heap_size_limit / 1048576 });
const kept = [];
setInterval(() => { for (let i = 0; i < 200; i++) kept.push(new Array(1000).fill(i)); }, 1);
`;

/** Starts the hungry worker as a role starts its threads, with THREAD_HEAP_MB=`heapMb` (and a bound of its own, `ownHeapMb`, if given); its log is JSON on stdout. */
function parentScript(heapMb: number, ownHeapMb?: number): string {
  return `
import { startWorkerThread } from ${roles('workerThread.ts')};
import { Lifecycle } from ${roles('lifecycle.ts')};
import { loadConfig } from ${infra('config.ts')};
import { createLogger } from ${infra('log.ts')};
import { createMetrics } from ${infra('metrics.ts')};
const log = createLogger('info', {}, false);
const config = loadConfig({ PORT: '0', LOG_LEVEL: 'info', THREAD_HEAP_MB: '${heapMb}' });
const ctx = { config, log, life: new Lifecycle(log), metrics: createMetrics() };
await startWorkerThread(ctx, 'hungry', 'base', new URL('data:text/javascript,' + encodeURIComponent(${JSON.stringify(hungryWorker)})), undefined, (m) => log.info({ limitMb: m.limitMb }, 'hungry worker heap'), ${ownHeapMb});
log.info('hungry worker started');
`;
}

interface LogLine {
  level: number;
  msg: string;
  limitMb?: number;
  heapLimitMb?: number;
  err?: { code?: string };
}

/** Runs the parent script until its process ends; its exit code and log lines. */
async function runHungry(script: string, killAfterMs?: number): Promise<{ code: number | null; lines: LogLine[] }> {
  const { code, out } = await runModuleScript(script, killAfterMs);
  return { code, lines: out.split('\n').filter(Boolean).map((l) => JSON.parse(l) as LogLine) };
}

test('a worker thread that outgrows THREAD_HEAP_MB stops its process with a line naming the setting', async () => {
  const { code, lines } = await runHungry(parentScript(48));
  expect(lines.some((l) => l.msg === 'hungry worker started')).toBe(true);
  // V8's whole-heap limit: the old generation asked for, plus the young generation every worker gets (V8's own: 192 MB on this Node).
  const { limitMb } = lines.find((l) => l.msg === 'hungry worker heap') ?? {};
  expect(limitMb).toBe(48 + youngGenerationMb);
  expect(lines.find((l) => l.level === 60)).toMatchObject({ msg: 'hungry worker ran out of its heap (THREAD_HEAP_MB=48): stopping', heapLimitMb: 48, err: { code: 'ERR_WORKER_OUT_OF_MEMORY' } });
  expect(code).toBe(1);
}, 60_000);

test("a thread with a bound of its own (the demo's simulator) is bounded by it, and its line names that bound, not the setting", async () => {
  const { code, lines } = await runHungry(parentScript(4_096, 48));
  const { limitMb } = lines.find((l) => l.msg === 'hungry worker heap') ?? {};
  expect(limitMb).toBe(48 + youngGenerationMb);
  expect(lines.find((l) => l.level === 60)).toMatchObject({ msg: 'hungry worker ran out of its heap (its own bound, 48 MB): stopping', heapLimitMb: 48 });
  expect(code).toBe(1);
}, 60_000);

/**
 * A main thread bounded as a role bounds it, MAIN_HEAP_MB=`boundMb`, with one part to stop; `keep`
 * says whether it keeps what it allocates (its live data grows), only the last 20 MB of it (garbage
 * only, through full collections too), or allocates 40 MB once and nothing after (V8 then has no
 * reason for a full collection). It ends itself, logging the full collections it saw, once it has
 * seen 6 of them or after `runMs`, if nothing stopped it first.
 */
function mainThreadScript(keep: 'everything' | 'the last 20 MB' | 'its first 40 MB, then nothing', runMs: number, boundMb = 48): string {
  return `
import { PerformanceObserver, constants } from 'node:perf_hooks';
import { boundMainHeap } from ${roles('mainHeap.ts')};
import { Lifecycle } from ${roles('lifecycle.ts')};
import { loadConfig } from ${infra('config.ts')};
import { createLogger } from ${infra('log.ts')};
const log = createLogger('info', {}, false);
const config = loadConfig({ PORT: '0', LOG_LEVEL: 'info', MAIN_HEAP_MB: '${boundMb}' });
const life = new Lifecycle(log);
life.add('a part', 'base', async () => log.info('a part stopped'));
boundMainHeap({ config, log, life });
let fullCollections = 0;
new PerformanceObserver((list) => { for (const e of list.getEntries()) if (e.detail.kind === constants.NODE_PERFORMANCE_GC_MAJOR) fullCollections++; }).observe({ entryTypes: ['gc'] });
const kept = [];
const keep = ${JSON.stringify(keep)};
// 8 kB arrays: 2,560 of them are 20 MB.
if (keep === 'its first 40 MB, then nothing') for (let i = 0; i < 5120; i++) kept.push(new Array(1000).fill(i));
else setInterval(() => { for (let i = 0; i < 200; i++) { kept.push(new Array(1000).fill(i)); if (keep !== 'everything' && kept.length > 2560) kept.shift(); } }, 1);
const end = Date.now() + ${runMs};
setInterval(() => { if (fullCollections >= 6 || Date.now() > end) { log.info({ fullCollections }, 'still running'); process.exit(0); } }, 50);
`;
}

test('a main thread whose live data stays over MAIN_HEAP_MB stops its process in order, with a line naming the setting', async () => {
  // Three full collections of a growing heap took 6.7 s on a quiet machine, 18.8 s beside the suite.
  const { code, lines } = await runHungry(mainThreadScript('everything', 90_000), 100_000);
  const fatal = lines.find((l) => l.level === 60) as (LogLine & { usedMb?: number; mainHeapMb?: number }) | undefined;
  expect(fatal, JSON.stringify(lines.slice(-5))).toMatchObject({ msg: "the main thread's heap stayed over MAIN_HEAP_MB=48 after 3 full collections: stopping", mainHeapMb: 48 });
  expect(fatal!.usedMb).toBeGreaterThan(48);
  // In order: its parts were stopped before it exited.
  expect(lines.some((l) => l.msg === 'a part stopped')).toBe(true);
  expect(lines.some((l) => l.msg === 'still running')).toBe(false);
  expect(code).toBe(1);
}, 120_000);

test('a main thread over MAIN_HEAP_MB that allocates nothing more is stopped all the same: a look at its heap forces the full collections V8 would not make', async () => {
  // V8 collects an idle heap in full by itself only after some 18 s (its memory reducer; measured
  // with the look turned off: full collections at 1.5, 18.0 and 26.9 s): the script ends at 10 s.
  const { code, lines } = await runHungry(mainThreadScript('its first 40 MB, then nothing', 10_000, 24), 40_000);
  const fatal = lines.find((l) => l.level === 60);
  expect(fatal, JSON.stringify(lines.slice(-5))).toMatchObject({ msg: "the main thread's heap stayed over MAIN_HEAP_MB=24 after 3 full collections: stopping" });
  expect(lines.some((l) => l.msg === 'still running')).toBe(false);
  expect(code).toBe(1);
}, 60_000);

test('a main thread that only makes garbage, through full collections, is not stopped', async () => {
  const { code, lines } = await runHungry(mainThreadScript('the last 20 MB', 30_000));
  expect(lines.filter((l) => l.level >= 50)).toEqual([]);
  const running = lines.find((l) => l.msg === 'still running') as (LogLine & { fullCollections?: number }) | undefined;
  // Six full collections happened: the bound was checked twice over, and held.
  expect(running?.fullCollections).toBeGreaterThanOrEqual(6);
  expect(code).toBe(0);
}, 60_000);

/**
 * A main thread whose heap grows as HEAP_GROWING_PERCENT=`percent` lets it (limitHeapGrowth), keeping
 * about 70 MB for good and the last 40 batches of 20,000 small arrays (the rest garbage that lives
 * past a few young collections); logs its live data after a last full collection and the most its
 * old generation held.
 */
function growthScript(percent: number): string {
  return `
import { getHeapSpaceStatistics, getHeapStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { limitHeapGrowth } from ${roles('mainHeap.ts')};
limitHeapGrowth(${percent});
const kept = [];
for (let i = 0; i < 1_000_000; i++) kept.push({ n: i, text: 'x' + i });
const recent = new Array(40);
let mostOldMb = 0;
for (let batch = 0; batch < 1_500; batch++) {
  const arrays = [];
  for (let i = 0; i < 20_000; i++) arrays.push([i, batch]);
  recent[batch % 40] = arrays;
  const old = getHeapSpaceStatistics().find((s) => s.space_name === 'old_space');
  mostOldMb = Math.max(mostOldMb, old.space_size / 1048576);
}
setFlagsFromString('--expose-gc');
runInNewContext('gc')();
console.log(JSON.stringify({ liveMb: getHeapStatistics().used_heap_size / 1048576, mostOldMb, kept: kept.length + recent.length }));
`;
}

test("HEAP_GROWING_PERCENT bounds how far past its live data a thread's heap grows (V8's own choice grew it to about four times)", async () => {
  const { code, out } = await runModuleScript(growthScript(50), 60_000);
  expect(code).toBe(0);
  const { liveMb, mostOldMb } = JSON.parse(out) as { liveMb: number; mostOldMb: number };
  expect(liveMb).toBeGreaterThan(60);
  // 50 % over the live data, with room for the garbage made while a collection runs.
  expect(mostOldMb, `live ${liveMb.toFixed(0)} MB, old generation at most ${mostOldMb.toFixed(0)} MB`).toBeLessThan(2.2 * liveMb);
}, 90_000);
