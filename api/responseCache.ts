import { createHash } from 'node:crypto';
import type { Request, RequestHandler } from 'express';
import type { z } from 'zod';

/** What the OpenAPI document says of a route; the same schemas validate its requests. */
export interface RouteDoc {
  operationId: string;
  tag: 'Coins' | 'Market' | 'Indicators';
  summary: string;
  path?: z.ZodObject;
  query: z.ZodObject;
  response: z.ZodType;
  /** Statuses besides 200, 401, 429 (which every endpoint has). */
  errors: number[];
}

/**
 * An endpoint whose body depends only on its normalized input: `resolve` validates the request
 * (throwing ApiError) and names the cache entry; `build` runs only on a miss.
 */
export interface CachedRoute {
  path: string;
  /** The endpoint's data refresh interval: entries live this long, clients may reuse them as long. */
  refreshSeconds: number;
  doc: RouteDoc;
  resolve(req: Request): { key: string; build: () => Promise<unknown> };
}

interface Entry {
  body: Buffer;
  etag: string;
  expiresAt: number;
}

/**
 * Serialized bodies with their ETag, built once per refresh interval: Express would otherwise
 * re-serialize and re-hash the body on every request (research/performance.md section 3).
 * Concurrent misses on one key share one build. At most `maxEntries` keys are held.
 */
export class ResponseCache {
  readonly #ttlMs: number;
  readonly #maxEntries: number;
  readonly #entries = new Map<string, Entry>();
  readonly #building = new Map<string, Promise<Entry>>();

  constructor(ttlMs: number, maxEntries = 1_000) {
    this.#ttlMs = ttlMs;
    this.#maxEntries = maxEntries;
  }

  async get(key: string, build: () => Promise<unknown>): Promise<Entry> {
    const entry = this.#entries.get(key);
    if (entry && entry.expiresAt > Date.now()) return entry;
    let pending = this.#building.get(key);
    if (!pending) {
      pending = this.#build(key, build).finally(() => this.#building.delete(key));
      this.#building.set(key, pending);
    }
    return pending;
  }

  async #build(key: string, build: () => Promise<unknown>): Promise<Entry> {
    const body = Buffer.from(JSON.stringify(await build()));
    const etag = `"${createHash('sha1').update(body).digest('base64url')}"`;
    const entry = { body, etag, expiresAt: Date.now() + this.#ttlMs };
    this.#entries.delete(key);
    this.#entries.set(key, entry);
    // Oldest insertion first: drop expired or oldest entries beyond the bound.
    for (const [k, e] of this.#entries) {
      if (this.#entries.size <= this.#maxEntries && e.expiresAt > Date.now()) break;
      this.#entries.delete(k);
    }
    return entry;
  }
}

/** The GET handler of a cached route: 200 with the cached bytes, or 304 when the client's ETag matches. */
export function cachedHandler(route: CachedRoute): RequestHandler {
  const cache = new ResponseCache(route.refreshSeconds * 1000);
  return async (req, res) => {
    const { key, build } = route.resolve(req);
    const entry = await cache.get(key, build);
    // private: the body is behind an API key and the quota; a shared cache must not serve it to others.
    res.set({ 'Cache-Control': `private, max-age=${route.refreshSeconds}`, ETag: entry.etag });
    res.type('json');
    // With the ETag set, Express neither hashes the body again nor misses a conditional GET (it answers 304).
    res.send(entry.body);
  };
}
