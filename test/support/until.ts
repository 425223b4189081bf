// The one way tests wait: on a condition, never on the clock alone. Every wait has a deadline (on
// performance.now(), so a test that fakes Date still times out) and fails naming what it waited
// for (and, for a probe that threw, its last error). Polls use setTimeout: a test that fakes
// timers waits with vi.waitFor instead.

export interface UntilOptions {
  /** How long to wait before failing (ms); default 20 s. */
  timeoutMs?: number;
  /** Pause between two polls (ms); default 20. */
  everyMs?: number;
  /** More to say when the wait fails (a process's last output, a counter's value). */
  context?: () => string;
}

const defaults = { timeoutMs: 20_000, everyMs: 20 };

function options(given: number | UntilOptions | undefined): Required<Omit<UntilOptions, 'context'>> & Pick<UntilOptions, 'context'> {
  return typeof given === 'number' ? { ...defaults, timeoutMs: given } : { ...defaults, ...given };
}

function timedOut(what: string, last: unknown, context: (() => string) | undefined): Error {
  const cause = last === undefined ? '' : `: ${last instanceof Error ? last.message : String(last)}`;
  const more = context ? `\n${context()}` : '';
  return new Error(`timed out waiting for ${what}${cause}${more}`);
}

/**
 * Polls `probe` until it returns a value other than undefined, and returns that value. A probe
 * that throws is polled again (its last error is named if the wait fails).
 */
export async function untilValue<T>(probe: () => T | undefined | Promise<T | undefined>, what: string, given?: number | UntilOptions): Promise<T> {
  const { timeoutMs, everyMs, context } = options(given);
  const deadline = performance.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined) return value;
    } catch (err) {
      last = err;
    }
    if (performance.now() > deadline) throw timedOut(what, last, context);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/**
 * Polls `cond` until it holds; fails naming `what` once the deadline (default 20 s) has passed. A
 * condition that throws fails the wait at once: it is an assertion, not a probe (see untilValue).
 */
export async function until(cond: () => boolean | Promise<boolean>, what: string, given?: number | UntilOptions): Promise<void> {
  const { timeoutMs, everyMs, context } = options(given);
  const deadline = performance.now() + timeoutMs;
  while (!(await cond())) {
    if (performance.now() > deadline) throw timedOut(what, undefined, context);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
