import type { Logger } from '../infra/log.ts';
import { ApiError } from './errors.ts';

/**
 * Runs a response build that reads the store. When the store cannot answer (down, closed, timing
 * out), the client gets 503 unavailable and may retry (spec 4.2), not a 500; the cause is logged
 * for operators. ApiErrors raised by the build (404, 503 for a missing rate, ...) pass unchanged.
 */
export async function orUnavailable<T>(log: Logger, what: string, build: () => Promise<T>): Promise<T> {
  try {
    return await build();
  } catch (err) {
    if (err instanceof ApiError) throw err;
    log.error({ err }, `${what}: the store did not answer`);
    throw new ApiError(503, 'unavailable', `${what} is temporarily unavailable; retry after a few seconds`);
  }
}
