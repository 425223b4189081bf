import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { Queue } from 'bullmq';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { openTestStore, silentLog } from '../../test/support/harness.ts';
import { until } from '../../test/support/until.ts';
import { retryDelay, startJobs, type Job, type JobContext, type JobRunner } from '../jobs.ts';
import type { Store } from '../store.ts';

/** test/run.sh starts a redis-server and sets this; without it the bullmq runner is untested, which must not pass silently. */
function redisUrl(): string {
  const url = process.env.MDS_TEST_REDIS_URL;
  if (!url) throw new Error('MDS_TEST_REDIS_URL is not set: run the tests through `npm test` (test/run.sh starts redis-server)');
  return url;
}

interface Run {
  by: string;
  start: number;
  end: number;
}

/** Runs started and not yet returned, across every recorded job of a test. */
let inFlight = 0;

/** A job whose runs are recorded with their start and end times; each takes `takesMs` unless aborted. */
function recordedJob(name: string, everyMs: number, takesMs: number, runs: Run[], by = 'a'): Job {
  return {
    name,
    everyMs,
    async run(ctx: JobContext) {
      const start = Date.now();
      inFlight += 1;
      try {
        // Proves the runner hands the store through: a real query on the real engine.
        await ctx.store.rows('SELECT 1 AS one');
        await sleep(takesMs, undefined, { signal: ctx.signal });
      } finally {
        inFlight -= 1;
        runs.push({ by, start, end: Date.now() });
      }
    },
  };
}

/** Pairs of runs whose [start, end] intervals intersect. */
function overlaps(runs: readonly Run[]): [Run, Run][] {
  const sorted = [...runs].sort((a, b) => a.start - b.start);
  const found: [Run, Run][] = [];
  for (let i = 1; i < sorted.length; i++) {
    const prev = sorted[i - 1]!;
    const cur = sorted[i]!;
    if (cur.start < prev.end) found.push([prev, cur]);
  }
  return found;
}

let store: Store;
let dispose: () => Promise<void>;
const runners: JobRunner[] = [];

beforeAll(async () => {
  ({ store, dispose } = await openTestStore());
});
afterEach(async () => {
  for (const r of runners.splice(0)) await r.stop();
});
afterAll(async () => {
  await dispose?.();
});

describe('retryDelay', () => {
  it('doubles from the base and never waits past the next regular run', () => {
    expect([1, 2, 3, 4].map((n) => retryDelay(n, 100, 10_000))).toEqual([100, 200, 400, 800]);
    expect(retryDelay(10, 100, 5_000)).toBe(5_000);
  });
});

describe('embedded runner (in-process timers)', () => {
  it('runs at start, then every everyMs between starts', async () => {
    const runs: Run[] = [];
    const t0 = Date.now();
    runners.push(await startJobs([recordedJob('tick', 100, 5, runs)], { store, log: silentLog }));
    await until(() => runs.length >= 5, 'five runs');
    const elapsed = Date.now() - t0;
    const starts = runs.map((r) => r.start - t0);
    expect(starts[0]).toBeLessThan(50);
    // Timers may fire late on a busy machine, never early: at most one run per 100 ms since the first.
    expect(runs.length).toBeGreaterThanOrEqual(4);
    expect(runs.length).toBeLessThanOrEqual(Math.floor(elapsed / 100) + 1);
    for (let i = 1; i < starts.length; i++) expect(starts[i]! - starts[i - 1]!).toBeGreaterThanOrEqual(95);
  });

  it('never overlaps a job with itself when a run outlasts everyMs', async () => {
    const runs: Run[] = [];
    runners.push(await startJobs([recordedJob('slow', 20, 80, runs)], { store, log: silentLog }));
    await until(() => runs.length >= 4, 'four runs of 80 ms');
    expect(runs.length).toBeGreaterThanOrEqual(4);
    expect(overlaps(runs)).toEqual([]);
  });

  it('logs a failed run and retries it with exponential backoff, then returns to the schedule', async () => {
    const starts: number[] = [];
    const job: Job = {
      name: 'flaky',
      everyMs: 60_000,
      async run() {
        starts.push(Date.now());
        if (starts.length <= 3) throw new Error(`failure ${starts.length}`);
      },
    };
    runners.push(await startJobs([job], { store, log: silentLog, retryDelayMs: 40 }));
    await until(() => starts.length >= 4, 'three retries and a success', 2_000);
    // Nothing to await here: no fifth run may come in the next 200 ms.
    await sleep(200);
    // Three failures: retries after about 40, 80 and 160 ms; the success then waits a whole minute.
    expect(starts.length).toBe(4);
    const gaps = starts.slice(1).map((s, i) => s - starts[i]!);
    expect(gaps[0]).toBeGreaterThanOrEqual(38);
    expect(gaps[1]).toBeGreaterThanOrEqual(78);
    expect(gaps[2]).toBeGreaterThanOrEqual(158);
    expect(gaps[2]).toBeLessThan(400);
  });

  it('stop() aborts the signal and waits for the run in flight', async () => {
    let started = false;
    let finishedAt = 0;
    let sawAbort = false;
    /** What happened, in order: the run's cleanup must come before stop() returns. */
    const events: string[] = [];
    const job: Job = {
      name: 'long',
      everyMs: 1_000,
      async run({ signal }) {
        started = true;
        await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
        sawAbort = signal.aborted;
        events.push('aborted');
        await sleep(50); // cleanup after the abort: stop() must wait for it
        finishedAt = Date.now();
        events.push('cleaned up');
      },
    };
    const runner = await startJobs([job], { store, log: silentLog });
    await until(() => started, 'the run to start');
    await runner.stop();
    events.push('stop returned');
    expect(sawAbort).toBe(true);
    expect(finishedAt).toBeGreaterThan(0);
    expect(events).toEqual(['aborted', 'cleaned up', 'stop returned']);
  });

  it('refuses two jobs with one name', async () => {
    const runs: Run[] = [];
    await expect(startJobs([recordedJob('dup', 100, 1, runs), recordedJob('dup', 100, 1, runs)], { store, log: silentLog })).rejects.toThrow(/unique/);
  });
});

describe('bullmq runner (REDIS_URL)', () => {
  const options = () => ({ store, log: silentLog, redisUrl: redisUrl(), prefix: `mds-test:${randomUUID()}`, retryDelayMs: 50 });

  it('fails its start with a message, instead of hanging, when Redis does not answer', async () => {
    const server = createServer().listen(0, '127.0.0.1');
    await once(server, 'listening');
    const { port } = server.address() as AddressInfo;
    await new Promise((resolve) => server.close(resolve));
    const runs: Run[] = [];
    const started = Date.now();
    await expect(
      startJobs([recordedJob('unreachable', 100, 1, runs)], { ...options(), redisUrl: `redis://127.0.0.1:${port}`, connectTimeoutMs: 500 }),
    ).rejects.toThrow(/Redis did not answer within 500 ms/);
    expect(Date.now() - started).toBeLessThan(3_000);
    expect(runs).toEqual([]);
  });

  it('runs the job on its schedule', async () => {
    const runs: Run[] = [];
    const t0 = Date.now();
    runners.push(await startJobs([recordedJob('tick', 200, 5, runs)], options()));
    await until(() => runs.length >= 4, 'four runs');
    const elapsed = Date.now() - t0;
    expect(runs[0]!.start - t0).toBeLessThan(400);
    // 200 ms apart: never more than one run per 200 ms since the start, give or take the scheduler's alignment.
    expect(runs.length).toBeGreaterThanOrEqual(3);
    expect(runs.length).toBeLessThanOrEqual(Math.floor(elapsed / 200) + 2);
  });

  it('two workers on one prefix never run the same job at once', async () => {
    const runs: Run[] = [];
    const opts = options();
    // Runs of 150 ms requested every 50 ms: the next run is due while one is in flight, and the
    // idle worker would take it at once without the queue's global concurrency (checked: with
    // setGlobalConcurrency removed, this test finds overlaps).
    const a = await startJobs([recordedJob('shared', 50, 150, runs, 'a')], opts);
    runners.push(await startJobs([recordedJob('shared', 50, 150, runs, 'b')], opts));
    await until(() => runs.length >= 8, 'eight runs while both workers are alive');
    const bothAlive = runs.length;
    // Whichever worker was winning, b is live and competing: with a gone, b takes over.
    await a.stop();
    await until(() => runs.filter((r) => r.by === 'b' && r.start > runs[bothAlive - 1]!.start).length >= 2, 'b running alone');
    for (const r of runners.splice(0)) await r.stop();
    expect(bothAlive).toBeGreaterThanOrEqual(8);
    expect(runs.filter((r) => r.by === 'b' && r.start > runs[bothAlive - 1]!.start).length).toBeGreaterThan(0);
    expect(overlaps(runs)).toEqual([]);
  });

  it('survives a restart: a worker stopped mid-run, then a new one continues the schedule', async () => {
    const runs: Run[] = [];
    const opts = options();
    const first = await startJobs([recordedJob('restartable', 300, 200, runs, 'first')], opts);
    await until(() => runs.length >= 2, 'two runs', 3_000);
    // Stop while a run is in flight: it is aborted, fails, and stays for a retry.
    await until(() => inFlight === 1, 'a run in flight', 1_000);
    await first.stop();
    expect(inFlight).toBe(0);
    const firstCount = runs.length;

    const queue = new Queue('restartable', { connection: { url: redisUrl() }, prefix: opts.prefix });
    try {
      const schedulers = await queue.getJobSchedulers();
      expect(schedulers.map((s) => s.key)).toEqual(['restartable']);
      expect(schedulers[0]!.every).toBe(300);
    } finally {
      await queue.close();
    }

    const restartedAt = Date.now();
    runners.push(await startJobs([recordedJob('restartable', 300, 200, runs, 'second')], opts));
    await until(() => runs.filter((r) => r.by === 'second').length >= 3, 'three runs of the new worker');
    const after = runs.filter((r) => r.by === 'second');
    expect(after.length).toBeGreaterThanOrEqual(3);
    expect(after[0]!.start - restartedAt).toBeLessThan(500);
    expect(runs.filter((r) => r.by === 'first').length).toBe(firstCount);
    expect(overlaps(runs)).toEqual([]);
  });
});
