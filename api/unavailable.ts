import type { Logger } from '../infra/log.ts';
import { ApiError } from './errors.ts';

/**
 * What the client gets when a response build fails with anything but an ApiError, i.e. the store
 * could not answer (down, closed, past its deadline) and nothing cached can stand in: 503, and it
 * may retry (spec 4.2), never a 500.
 */
export function storeUnavailable(): ApiError {
  return new ApiError(503, 'unavailable', 'this data is temporarily unavailable; retry in a few seconds', { 'Retry-After': '5' });
}

/**
 * Logs failed builds of one route for operators, at most one line per `intervalMs` with the count
 * of those not logged since: an outage fails every build, and must not write a stack for each.
 */
export class BuildFailureLog {
  readonly #what: string;
  readonly #intervalMs: number;
  #loggedAt = Number.NEGATIVE_INFINITY;
  #notLogged = 0;

  constructor(what: string, intervalMs = 10_000) {
    this.#what = what;
    this.#intervalMs = intervalMs;
  }

  report(log: Logger, err: unknown): void {
    const now = Date.now();
    if (now - this.#loggedAt < this.#intervalMs) {
      this.#notLogged += 1;
      return;
    }
    log.error({ err, notLoggedSincePrevious: this.#notLogged }, `${this.#what}: the store did not answer`);
    this.#loggedAt = now;
    this.#notLogged = 0;
  }
}
