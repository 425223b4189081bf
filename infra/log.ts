import { isMainThread } from 'node:worker_threads';
import { pino, stdSerializers, type Logger } from 'pino';
import PinoPretty from 'pino-pretty';
import { redactCredentials } from './redact.ts';

export type { Logger };

/** Errors as pino serializes them, without the credentials of any URL their message or stack names. */
function redactedError(err: Error): ReturnType<typeof stdSerializers.err> {
  const serialized = stdSerializers.err(err);
  if (typeof serialized.message === 'string') serialized.message = redactCredentials(serialized.message);
  if (typeof serialized.stack === 'string') serialized.stack = redactCredentials(serialized.stack);
  return serialized;
}

/**
 * One structured logger per process; children carry the role, venue or request id. JSON lines on
 * stdout for a log collector; readable lines when stdout is a terminal (`pretty`). The last lines
 * before an exit are written, whichever thread logged them.
 */
export function createLogger(level: string, bindings: Record<string, unknown> = {}, pretty = process.stdout.isTTY === true): Logger {
  const options = {
    level,
    base: bindings,
    serializers: { err: redactedError },
    // API keys must never reach a log line, whatever the caller logs.
    redact: {
      paths: ['apiKey', 'key', 'req.headers["x-api-key"]', 'req.headers.authorization', 'headers["x-api-key"]', 'headers.authorization'],
      censor: '[redacted]',
    },
  };
  // pino writes JSON lines asynchronously and, on the main thread only, flushes them at exit: a worker
  // thread's last lines, waiting for its busy event loop, were lost when the process exited at the
  // shutdown deadline. A worker's lines are few (the collectors' warnings): written at once.
  return pino(options, pretty ? PinoPretty({ sync: true, translateTime: 'SYS:HH:MM:ss.l' }) : pino.destination({ dest: 1, sync: !isMainThread }));
}
