// THREAD_HEAP_MB bounds every worker thread's heap (infra/roles/workerThread.ts): a thread whose live
// data outgrows it fails, and its process stops with a line that names the setting, instead of
// growing without bound. Run in a child process: the failure ends the process it happens in.
import { fileURLToPath } from 'node:url';
import { expect, test } from 'vitest';
import { runModuleScript } from '../../test/support/moduleScript.ts';

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
async function runHungry(script: string): Promise<{ code: number | null; lines: LogLine[] }> {
  const { code, out } = await runModuleScript(script);
  return { code, lines: out.split('\n').filter(Boolean).map((l) => JSON.parse(l) as LogLine) };
}

test('a worker thread that outgrows THREAD_HEAP_MB stops its process with a line naming the setting', async () => {
  const { code, lines } = await runHungry(parentScript(48));
  expect(lines.some((l) => l.msg === 'hungry worker started')).toBe(true);
  // V8's whole-heap limit: the old generation asked for, plus its young generation (192 MB on this Node).
  const { limitMb } = lines.find((l) => l.msg === 'hungry worker heap') ?? {};
  expect(limitMb).toBeGreaterThanOrEqual(48);
  expect(limitMb).toBeLessThanOrEqual(48 + 256);
  expect(lines.find((l) => l.level === 60)).toMatchObject({ msg: 'hungry worker ran out of its heap (THREAD_HEAP_MB=48): stopping', heapLimitMb: 48, err: { code: 'ERR_WORKER_OUT_OF_MEMORY' } });
  expect(code).toBe(1);
}, 60_000);

test("a thread with a bound of its own (the demo's simulator) is bounded by it, and its line names that bound, not the setting", async () => {
  const { code, lines } = await runHungry(parentScript(4_096, 48));
  const { limitMb } = lines.find((l) => l.msg === 'hungry worker heap') ?? {};
  expect(limitMb).toBeLessThanOrEqual(48 + 256);
  expect(lines.find((l) => l.level === 60)).toMatchObject({ msg: 'hungry worker ran out of its heap (its own bound, 48 MB): stopping', heapLimitMb: 48 });
  expect(code).toBe(1);
}, 60_000);
