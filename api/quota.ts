import type { RequestHandler, Response } from 'express';
import { Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import type { Logger } from '../infra/log.ts';
import { apiKeyOf } from './auth.ts';
import { ApiError } from './errors.ts';
import { requestLog } from './requestId.ts';

const windowSeconds = 3600;

export interface QuotaOptions {
  /** Requests per key per window. */
  perHour: number;
  /** Shared quota for every API replica; unset = this process only. */
  redisUrl?: string;
  /** Namespace of the counters in Redis (tests use a random one per run). */
  keyPrefix?: string;
  /** Where Redis connection trouble is reported. */
  log?: Logger;
}

export interface Quota {
  readonly perHour: number;
  /** Runs after `requireKey`: counts the request and sets the x-ratelimit-* headers. */
  readonly middleware: RequestHandler;
  close(): Promise<void>;
}

/**
 * Requests per key in a fixed one-hour window that starts with the key's first request (spec
 * section 8; ARCHITECTURE.md "Decisions on the gaps"). Counted per key hash, never the raw key.
 * With Redis the count is shared by every replica, and an unreachable Redis answers 503: letting
 * requests through uncounted would silently lift the quota.
 */
export function createQuota(options: QuotaOptions): Quota {
  const { perHour } = options;
  const keyPrefix = options.keyPrefix ?? 'mds:quota';
  let limiter: RateLimiterMemory | RateLimiterRedis;
  let redis: Redis | undefined;
  if (options.redisUrl) {
    redis = new Redis(options.redisUrl, {
      // Fail fast instead of queueing commands while disconnected; ioredis keeps reconnecting.
      enableOfflineQueue: false,
      maxRetriesPerRequest: 1,
      commandTimeout: 2_000,
    });
    let lastLoggedAt = 0;
    redis.on('error', (err: unknown) => {
      if (Date.now() - lastLoggedAt < 10_000) return;
      lastLoggedAt = Date.now();
      options.log?.warn({ err }, 'quota store (Redis) unreachable; requests are answered 503');
    });
    limiter = new RateLimiterRedis({ storeClient: redis, points: perHour, duration: windowSeconds, keyPrefix, rejectIfRedisNotReady: true });
  } else {
    limiter = new RateLimiterMemory({ points: perHour, duration: windowSeconds, keyPrefix });
  }

  const middleware: RequestHandler = async (_req, res, next) => {
    let state: RateLimiterRes;
    try {
      state = await limiter.consume(apiKeyOf(res).keyHash);
    } catch (err) {
      if (!(err instanceof RateLimiterRes)) {
        requestLog(res).error({ err }, 'quota check failed');
        throw new ApiError(503, 'unavailable', 'the request quota cannot be checked right now; retry in a few seconds', {
          'Retry-After': '5',
        });
      }
      const reset = setHeaders(res, perHour, err);
      throw new ApiError(429, 'quota_exceeded', `more than ${perHour} requests in the hour; retry in ${reset} s`, {
        'Retry-After': String(reset),
      });
    }
    setHeaders(res, perHour, state);
    next();
  };

  return {
    perHour,
    middleware,
    async close() {
      if (redis && redis.status !== 'end') await redis.quit().catch(() => redis?.disconnect());
    },
  };
}

/** Sets the x-ratelimit-* headers; returns the whole seconds until the window resets. */
function setHeaders(res: Response, limit: number, state: RateLimiterRes): number {
  const reset = Math.max(0, Math.ceil(state.msBeforeNext / 1000));
  res.set({
    'x-ratelimit-limit': String(limit),
    'x-ratelimit-remaining': String(Math.max(0, state.remainingPoints)),
    'x-ratelimit-reset': String(reset),
  });
  return reset;
}
