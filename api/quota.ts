import type { RequestHandler } from 'express';
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
  /**
   * Counts one request of the key outside Express (the stream's connections and subscriptions);
   * returns the x-ratelimit-* headers, or throws ApiError 429 quota_exceeded or 503 unavailable.
   */
  consume(keyHash: string): Promise<Record<string, string>>;
  close(): Promise<void>;
}

/** How long a Redis command may take before the quota answers 503; also the longest wait for the first connection. */
const redisCommandTimeoutMs = 2_000;

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
  /** Resolves once the Redis client first connects, or after the command timeout; undefined in memory. */
  let firstConnection: Promise<void> | undefined;
  if (options.redisUrl) {
    redis = new Redis(options.redisUrl, {
      // Fail fast instead of queueing commands while disconnected; ioredis keeps reconnecting.
      enableOfflineQueue: false,
      maxRetriesPerRequest: 1,
      commandTimeout: redisCommandTimeoutMs,
    });
    let lastLoggedAt = 0;
    redis.on('error', (err: unknown) => {
      if (Date.now() - lastLoggedAt < 10_000) return;
      lastLoggedAt = Date.now();
      options.log?.warn({ err }, 'quota store (Redis) unreachable; requests are answered 503');
    });
    // A replica that has just started would otherwise answer 503 until its first connection is up:
    // requests wait for it, at most as long as a command may take.
    const client = redis;
    firstConnection = new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, redisCommandTimeoutMs);
      timer.unref();
      client.once('ready', () => {
        clearTimeout(timer);
        resolve();
      });
    });
    limiter = new RateLimiterRedis({ storeClient: redis, points: perHour, duration: windowSeconds, keyPrefix, rejectIfRedisNotReady: true });
  } else {
    limiter = new RateLimiterMemory({ points: perHour, duration: windowSeconds, keyPrefix });
  }

  /** `log` says where a failing quota store is reported (the request's logger for HTTP requests). */
  async function consume(keyHash: string, log: () => Logger | undefined = () => options.log): Promise<Record<string, string>> {
    let state: RateLimiterRes;
    if (firstConnection) await firstConnection;
    try {
      state = await limiter.consume(keyHash);
    } catch (err) {
      if (!(err instanceof RateLimiterRes)) {
        log()?.error({ err }, 'quota check failed');
        throw new ApiError(503, 'unavailable', 'the request quota cannot be checked right now; retry in a few seconds', {
          'Retry-After': '5',
        });
      }
      const headers = rateLimitHeaders(perHour, err);
      throw new ApiError(429, 'quota_exceeded', `more than ${perHour} requests in the hour; retry in ${headers['x-ratelimit-reset']} s`, {
        ...headers,
        'Retry-After': headers['x-ratelimit-reset'],
      });
    }
    return rateLimitHeaders(perHour, state);
  }

  const middleware: RequestHandler = async (_req, res, next) => {
    res.set(await consume(apiKeyOf(res).keyHash, () => requestLog(res)));
    next();
  };

  return {
    perHour,
    middleware,
    consume: (keyHash) => consume(keyHash),
    async close() {
      if (redis && redis.status !== 'end') await redis.quit().catch(() => redis?.disconnect());
    },
  };
}

/** The x-ratelimit-* headers of a quota state; reset is in whole seconds until the window resets. */
function rateLimitHeaders(limit: number, state: RateLimiterRes): { 'x-ratelimit-limit': string; 'x-ratelimit-remaining': string; 'x-ratelimit-reset': string } {
  return {
    'x-ratelimit-limit': String(limit),
    'x-ratelimit-remaining': String(Math.max(0, state.remainingPoints)),
    'x-ratelimit-reset': String(Math.max(0, Math.ceil(state.msBeforeNext / 1000))),
  };
}
