import { setTimeout as sleep } from 'node:timers/promises';
import { Queue, Worker } from 'bullmq';
import type { Logger } from './log.ts';
import type { Store } from './store.ts';

/** What a job gets each run. */
export interface JobContext {
  store: Store;
  log: Logger;
  /** Aborted when the service stops: long runs should check it between steps. */
  signal: AbortSignal;
}

/**
 * A scheduled job: reference data imports, indicators, indexers. The same `run` is driven by
 * in-process timers (embedded) or by bullmq workers (REDIS_URL set); it must be idempotent,
 * since a run that failed or was cut short is run again.
 */
export interface Job {
  /** Unique, stable: the bullmq queue and scheduler are named after it. */
  name: string;
  /** Time between the starts of two runs, ms. The first run starts when the scheduler does. */
  everyMs: number;
  run(ctx: JobContext): Promise<void>;
}

export interface JobRunnerOptions {
  store: Store;
  log: Logger;
  /** bullmq queues and workers on this Redis; unset = in-process timers. */
  redisUrl?: string;
  /** Namespace of the bullmq keys in Redis (tests use a random one per test). */
  prefix?: string;
  /** First retry delay after a failed run, ms; doubled on each further failure. */
  retryDelayMs?: number;
  /** With Redis: how long start may wait for it before giving up (ms). */
  connectTimeoutMs?: number;
}

export interface JobRunner {
  /** Aborts the runs in flight (their `signal`), waits for them to return, and schedules nothing more. */
  stop(): Promise<void>;
}

export const defaultJobPrefix = 'mds:jobs';
const defaultRetryDelayMs = 1_000;
const defaultConnectTimeoutMs = 15_000;
/** bullmq attempts per scheduled run (the first one included) before it counts as failed. */
const attemptsPerRun = 5;

/**
 * Runs `jobs` on schedule. Embedded: one timer loop per job in this process. With `redisUrl`:
 * one bullmq queue per job with a job scheduler (`every`), and a worker per queue in this
 * process; the queue's global concurrency of 1 keeps any number of such processes from running
 * the same job twice at once, and the schedule lives in Redis, so it survives restarts.
 */
export async function startJobs(jobs: readonly Job[], options: JobRunnerOptions): Promise<JobRunner> {
  const names = new Set<string>();
  for (const job of jobs) {
    if (names.has(job.name)) throw new Error(`two jobs are named ${JSON.stringify(job.name)}: job names must be unique`);
    if (!(job.everyMs > 0)) throw new Error(`job ${job.name}: everyMs must be positive`);
    names.add(job.name);
  }
  return options.redisUrl ? startBullmqJobs(jobs, { ...options, redisUrl: options.redisUrl }) : startTimerJobs(jobs, options);
}

/** Delay before the retry after `failures` consecutive failed runs: exponential, never past the next regular run. */
export function retryDelay(failures: number, baseMs: number, everyMs: number): number {
  return Math.min(everyMs, baseMs * 2 ** Math.max(0, failures - 1));
}

function startTimerJobs(jobs: readonly Job[], options: JobRunnerOptions): JobRunner {
  const stopping = new AbortController();
  const baseMs = options.retryDelayMs ?? defaultRetryDelayMs;

  // One sequential loop per job: a run starts only after the previous one returned, so a job
  // never overlaps itself, however long it takes.
  const loop = async (job: Job): Promise<void> => {
    const log = options.log.child({ job: job.name });
    const signal = stopping.signal;
    let failures = 0;
    while (!signal.aborted) {
      const startedAt = Date.now();
      let waitMs: number;
      try {
        await job.run({ store: options.store, log, signal });
        failures = 0;
        waitMs = startedAt + job.everyMs - Date.now();
      } catch (err) {
        if (signal.aborted) break;
        failures += 1;
        waitMs = retryDelay(failures, baseMs, job.everyMs);
        log.error({ err, failures, retryInMs: waitMs }, 'job run failed');
      }
      await sleep(Math.max(0, waitMs), undefined, { signal }).catch(() => undefined);
    }
  };
  const loops = jobs.map((job) => loop(job));
  options.log.info({ jobs: jobs.map((j) => j.name), runner: 'timers' }, 'jobs started');

  return {
    async stop() {
      stopping.abort();
      await Promise.all(loops);
    },
  };
}

function startBullmqJobs(jobs: readonly Job[], options: JobRunnerOptions & { redisUrl: string }): Promise<JobRunner> {
  const stopping = new AbortController();
  const prefix = options.prefix ?? defaultJobPrefix;
  // bullmq's workers block on Redis: it wants maxRetriesPerRequest null on their connections.
  const connection = { url: options.redisUrl, maxRetriesPerRequest: null };
  const queues: Queue[] = [];
  const workers: Worker[] = [];

  const stop = async () => {
    stopping.abort();
    // close() waits for the job in flight: its run sees the aborted signal and returns.
    await Promise.allSettled(workers.map((w) => w.close()));
    await Promise.allSettled(queues.map((q) => q.close()));
  };

  const start = async (): Promise<JobRunner> => {
    for (const job of jobs) {
      // A start that timed out goes on in the background: it must not leave a worker behind.
      if (stopping.signal.aborted) throw new Error('jobs: start abandoned');
      const log = options.log.child({ job: job.name });
      const queue = new Queue(job.name, { connection, prefix });
      queues.push(queue);
      queue.on('error', (err) => log.warn({ err }, 'job queue: Redis error'));
      // Across every worker process: at most one run of this job at any moment.
      await queue.setGlobalConcurrency(1);
      // Upserting is idempotent: every process may do it at start; the schedule stays in Redis.
      await queue.upsertJobScheduler(
        job.name,
        { every: job.everyMs },
        {
          name: job.name,
          opts: {
            attempts: attemptsPerRun,
            backoff: { type: 'exponential', delay: options.retryDelayMs ?? defaultRetryDelayMs },
            removeOnComplete: { count: 100 },
            removeOnFail: { count: 500 },
          },
        },
      );
      if (stopping.signal.aborted) throw new Error('jobs: start abandoned');

      const worker = new Worker(
        job.name,
        async (_bullJob, _token, jobSignal) => {
          const signal = jobSignal ? AbortSignal.any([stopping.signal, jobSignal]) : stopping.signal;
          await job.run({ store: options.store, log, signal });
        },
        { connection, prefix, concurrency: 1 },
      );
      workers.push(worker);
      worker.on('error', (err) => log.warn({ err }, 'job worker: Redis error'));
      worker.on('failed', (bullJob, err) => {
        const attempt = { attempt: bullJob?.attemptsMade, of: attemptsPerRun };
        if (stopping.signal.aborted) log.info(attempt, 'job run cut short by shutdown; it is retried by the next worker');
        else log.error({ err, ...attempt }, 'job run failed');
      });
      await worker.waitUntilReady();
    }
    options.log.info({ jobs: jobs.map((j) => j.name), runner: 'bullmq', prefix }, 'jobs started');
    return { stop };
  };

  // bullmq queues its commands until Redis answers: without a bound, a wrong REDIS_URL would
  // hang the start silently instead of failing it with a message.
  const timeoutMs = options.connectTimeoutMs ?? defaultConnectTimeoutMs;
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`jobs: Redis did not answer within ${timeoutMs} ms (REDIS_URL)`)), timeoutMs);
  });
  return Promise.race([start(), timeout])
    .catch(async (err: unknown) => {
      await Promise.race([stop(), sleep(timeoutMs)]);
      throw err;
    })
    .finally(() => clearTimeout(timer));
}
