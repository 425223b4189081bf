import { pino, type Logger } from 'pino';

export type { Logger };

/** One structured logger per process; children carry the role, venue or request id. */
export function createLogger(level: string, bindings: Record<string, unknown> = {}): Logger {
  return pino({
    level,
    base: bindings,
    // API keys must never reach a log line, whatever the caller logs.
    redact: {
      paths: ['apiKey', 'key', 'req.headers["x-api-key"]', 'req.headers.authorization', 'headers["x-api-key"]', 'headers.authorization'],
      censor: '[redacted]',
    },
  });
}
