import { configSchema } from '../config.ts';
import type { Logger } from '../log.ts';

/**
 * When a part stops. The stages stop one after another, the parts of one stage all at once:
 * - `front`: what answers outside the process (the API, the operator endpoints, the admin and store
 *   channels) stops accepting first; the API lets the requests in flight finish within its own bound;
 * - `sources`: what publishes to the bus (the collectors), so that their last events are on it;
 * - `consumers`: what reads the bus or works on the store (the sinks, the index runner, the jobs,
 *   the stream's trades);
 * - `base`: what the others stand on (the bus, the store, the demo's simulators), once they are done.
 */
export const stopStages = ['front', 'sources', 'consumers', 'base'] as const;
export type StopStage = (typeof stopStages)[number];

/** The configuration's default (SHUTDOWN_DEADLINE_MS), for a lifecycle made without one (tests). */
const defaultShutdownDeadlineMs = configSchema.pick({ SHUTDOWN_DEADLINE_MS: true }).parse({}).SHUTDOWN_DEADLINE_MS;
/** A part whose stop takes this long is named in the log, with its time. */
const slowStopMs = 1_000;

interface Part {
  name: string;
  stage: StopStage;
  stop: () => Promise<unknown>;
}

/**
 * Stops the registered parts once, on SIGINT/SIGTERM or a fatal error, stage by stage
 * (`stopStages`), all within one deadline for the whole process: a part that hangs (a store call
 * that never returns) holds back neither the parts of its stage nor the exit. At the deadline the
 * parts still stopping, and those whose stage never came, are logged by name, and `shutdown`
 * resolves: the caller exits.
 */
export class Lifecycle {
  readonly #parts: Part[] = [];
  readonly #log: Logger;
  readonly #deadlineMs: number;
  #stopping: Promise<void> | undefined;

  constructor(log: Logger, deadlineMs = defaultShutdownDeadlineMs) {
    this.#log = log;
    this.#deadlineMs = deadlineMs;
  }

  add(name: string, stage: StopStage, stop: () => Promise<unknown>): void {
    this.#parts.push({ name, stage, stop });
  }

  shutdown(reason: string): Promise<void> {
    this.#stopping ??= this.#stopAll(reason);
    return this.#stopping;
  }

  async #stopAll(reason: string): Promise<void> {
    const deadlineMs = this.#deadlineMs;
    this.#log.info({ reason, deadlineMs }, 'shutting down');
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<'passed'>((resolve) => (timer = setTimeout(() => resolve('passed'), deadlineMs)));
    /** Parts whose stop has begun and not settled. */
    const stopping = new Set<Part>();
    let stage = 0;
    try {
      for (; stage < stopStages.length; stage++) {
        const parts = this.#parts.filter((p) => p.stage === stopStages[stage]);
        const stopped = Promise.allSettled(parts.map((part) => this.#stopPart(part, stopping)));
        if ((await Promise.race([stopped, deadline])) === 'passed') break;
      }
    } finally {
      clearTimeout(timer);
    }
    for (const { name } of stopping) this.#log.error({ part: name, deadlineMs }, 'part did not stop by the shutdown deadline; exiting without it');
    for (const part of this.#parts.filter((p) => stopStages.indexOf(p.stage) > stage)) {
      this.#log.error({ part: part.name, stage: part.stage, deadlineMs }, 'part not stopped: the shutdown deadline passed before its stage');
    }
    this.#log.info(stage === stopStages.length ? 'stopped' : 'stopped at the shutdown deadline');
  }

  async #stopPart(part: Part, stopping: Set<Part>): Promise<void> {
    stopping.add(part);
    const started = performance.now();
    try {
      await part.stop();
    } catch (err) {
      this.#log.error({ err, part: part.name }, 'error while stopping');
    } finally {
      stopping.delete(part);
      // What a stop's time went to, for a deadline that is too short.
      const ms = Math.round(performance.now() - started);
      if (ms >= slowStopMs) this.#log.info({ part: part.name, ms }, 'part took a while to stop');
    }
  }
}
