import { createHash } from 'node:crypto';
import { promisify } from 'node:util';
import { brotliCompress, constants as zlibConstants, gzip } from 'node:zlib';
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

type Encoding = 'br' | 'gzip';

interface Entry {
  body: Buffer;
  etag: string;
  expiresAt: number;
  /** Compressed forms, each made on the first request that accepts it, then reused until expiry. */
  encoded: Partial<Record<Encoding, Promise<Buffer>>>;
}

/** Bodies up to this size are sent as they are: compressing them saves less than it costs. */
const compressAbove = 1024;
const compressors: Record<Encoding, (body: Buffer) => Promise<Buffer>> = {
  // Quality 5: most of brotli's gain at a fraction of the default's (11) time; made once per refresh.
  br: (body) => promisify(brotliCompress)(body, { params: { [zlibConstants.BROTLI_PARAM_QUALITY]: 5 } }),
  gzip: (body) => promisify(gzip)(body),
};

function encodedBody(entry: Entry, encoding: Encoding): Promise<Buffer> {
  return (entry.encoded[encoding] ??= compressors[encoding](entry.body));
}

/** The encoding to send: brotli over gzip when the client accepts both; none for small bodies. */
function negotiate(req: Request, size: number): Encoding | undefined {
  if (size <= compressAbove || req.headers['accept-encoding'] === undefined) return undefined;
  const best = req.acceptsEncodings('br', 'gzip', 'identity');
  return best === 'br' || best === 'gzip' ? best : undefined;
}

/**
 * Serialized bodies with their ETag, built once per refresh interval: Express would otherwise
 * re-serialize and re-hash the body on every request (research/performance.md section 3).
 * Concurrent misses on one key share one build. For one more interval after it expires, an entry
 * is still served while its successor is built, so after the first request of a key no request
 * waits on the store. At most `maxEntries` keys are held.
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

  get(key: string, build: () => Promise<unknown>): Entry | Promise<Entry> {
    const now = Date.now();
    const entry = this.#entries.get(key);
    if (entry && entry.expiresAt > now) return entry;
    let pending = this.#building.get(key);
    if (!pending) {
      pending = this.#build(key, build).finally(() => this.#building.delete(key));
      // A failed rebuild behind a stale entry is seen by the first request that has to wait for one.
      pending.catch(() => {});
      this.#building.set(key, pending);
    }
    return entry && entry.expiresAt + this.#ttlMs > now ? entry : pending;
  }

  async #build(key: string, build: () => Promise<unknown>): Promise<Entry> {
    const body = Buffer.from(JSON.stringify(await build()));
    const etag = `"${createHash('sha1').update(body).digest('base64url')}"`;
    const entry: Entry = { body, etag, expiresAt: Date.now() + this.#ttlMs, encoded: {} };
    this.#entries.delete(key);
    this.#entries.set(key, entry);
    // Oldest insertion first: drop entries past their stale interval, and the oldest beyond the bound.
    for (const [k, e] of this.#entries) {
      if (this.#entries.size <= this.#maxEntries && e.expiresAt + this.#ttlMs > Date.now()) break;
      this.#entries.delete(k);
    }
    return entry;
  }
}

/**
 * The GET handler of a cached route: 200 with the cached bytes (compressed once per entry when the
 * client accepts it, so no request pays for compression), or 304 when the client's ETag matches.
 */
export function cachedHandler(route: CachedRoute): RequestHandler {
  const cache = new ResponseCache(route.refreshSeconds * 1000);
  // private: the body is behind an API key and the quota; a shared cache must not serve it to others.
  const cacheControl = `private, max-age=${route.refreshSeconds}`;
  return async (req, res) => {
    const { key, build } = route.resolve(req);
    const cached = cache.get(key, build);
    // Most requests find a fresh entry: no await, no extra turn of the event loop.
    const entry = cached instanceof Promise ? await cached : cached;
    const encoding = negotiate(req, entry.body.length);
    res.setHeader('Cache-Control', cacheControl);
    res.setHeader('Content-Type', 'application/json; charset=utf-8');
    if (entry.body.length > compressAbove) res.setHeader('Vary', 'Accept-Encoding');
    if (encoding === undefined) {
      res.setHeader('ETag', entry.etag);
      // With the ETag set, Express neither hashes the body again nor misses a conditional GET (it answers 304).
      res.send(entry.body);
      return;
    }
    // Each representation has its own validator (RFC 9110 8.8.3).
    res.setHeader('ETag', `${entry.etag.slice(0, -1)}-${encoding}"`);
    res.setHeader('Content-Encoding', encoding);
    res.send(await encodedBody(entry, encoding));
  };
}
