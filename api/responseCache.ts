import type { Request, RequestHandler } from 'express';
import type { z } from 'zod';
import { compressAbove, compressors, etagOf, negotiatedEncoding, type Encoding } from './encoding.ts';
import { ApiError } from './errors.ts';
import { requestLog } from './requestId.ts';
import { BuildFailureLog, storeUnavailable } from './unavailable.ts';

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
  readonly key: string;
  body: Buffer;
  etag: string;
  builtAt: number;
  expiresAt: number;
  /** Compressed forms, each made on the first request that accepts it, then reused until expiry. */
  encoded: Partial<Record<Encoding, Promise<Buffer>>>;
  /** The body plus its compressed forms made so far: what the entry costs the byte budget. */
  bytes: number;
}

/** What a request gets: an entry, `stale` when it is served past its expiry because its rebuild failed. */
export interface Served {
  entry: Entry;
  stale: boolean;
}

export interface ResponseCacheOptions {
  /** Most keys held (default 1,000). */
  maxEntries?: number;
  /** Most bytes held, bodies plus their compressed forms (default 32 MiB). */
  maxBytes?: number;
  /** How long (ms) past its expiry an entry may stand in for a failing build (default 15 min, at least one interval). */
  staleIfErrorMs?: number;
  /** After a failed build, how long (ms) requests of that key wait before one of them tries again (default 1 s). */
  retryAfterFailureMs?: number;
}

/**
 * Serialized bodies with their ETag, built once per refresh interval: Express would otherwise
 * re-serialize and re-hash the body on every request (research/performance.md section 3).
 * Concurrent misses on one key share one build. For one more interval after it expires, an entry
 * is still served while its successor is built, so after the first request of a key no request
 * waits on the store.
 *
 * When the store fails (a build rejects with anything but an ApiError), an entry up to
 * `staleIfErrorMs` past its expiry is served instead, marked stale, without waiting on later
 * rebuilds; with nothing to serve, the failure reaches the caller. Either way the key is rebuilt
 * at most once per `retryAfterFailureMs`, so an outage does not send every request to the store.
 * Bounded by `maxEntries` and `maxBytes`, oldest build dropped first.
 */
export class ResponseCache {
  readonly #ttlMs: number;
  readonly #maxEntries: number;
  readonly #maxBytes: number;
  /** How long past its expiry an entry may still be served: the stale-while-revalidate interval, or longer on errors. */
  readonly #keepMs: number;
  readonly #retryAfterFailureMs: number;
  readonly #entries = new Map<string, Entry>();
  #bytes = 0;
  readonly #building = new Map<string, Promise<Entry>>();
  /** Keys whose last build failed (store errors only), with when and why; cleared by a successful build. */
  readonly #failures = new Map<string, { at: number; error: unknown }>();

  constructor(ttlMs: number, options: ResponseCacheOptions = {}) {
    this.#ttlMs = ttlMs;
    this.#maxEntries = options.maxEntries ?? 1_000;
    this.#maxBytes = options.maxBytes ?? 32 * 1024 * 1024;
    this.#keepMs = Math.max(ttlMs, options.staleIfErrorMs ?? 15 * 60_000);
    this.#retryAfterFailureMs = options.retryAfterFailureMs ?? 1_000;
  }

  get(key: string, build: () => Promise<unknown>): Served | Promise<Served> {
    const now = Date.now();
    const entry = this.#entries.get(key);
    if (entry && now < entry.expiresAt) return { entry, stale: false };
    const failure = this.#failures.get(key);
    const rebuilding = this.#rebuild(key, build, now);
    const servable = entry && now < entry.expiresAt + this.#keepMs ? entry : undefined;
    // Within one interval past expiry: served while the rebuild runs; longer while the store fails, without waiting.
    if (servable && (now < servable.expiresAt + this.#ttlMs || failure)) return { entry: servable, stale: failure !== undefined };
    if (!rebuilding) return Promise.reject(failure?.error);
    return rebuilding.then(
      (built) => ({ entry: built, stale: false }),
      (err: unknown) => {
        if (servable && !(err instanceof ApiError)) return { entry: servable, stale: true };
        throw err;
      },
    );
  }

  /** The compressed body, made once per entry; it counts against the byte budget from then on. */
  encodedBody(entry: Entry, encoding: Encoding): Promise<Buffer> {
    let encoded = entry.encoded[encoding];
    if (!encoded) {
      encoded = compressors[encoding](entry.body);
      entry.encoded[encoding] = encoded;
      encoded.then(
        (buf) => {
          entry.bytes += buf.length;
          if (this.#entries.get(entry.key) !== entry) return;
          this.#bytes += buf.length;
          this.#evict(Date.now());
        },
        () => {},
      );
    }
    return encoded;
  }

  /** The key's build in flight, or a new one; undefined while its last failure is too recent to try again. */
  #rebuild(key: string, build: () => Promise<unknown>, now: number): Promise<Entry> | undefined {
    const running = this.#building.get(key);
    if (running) return running;
    const failure = this.#failures.get(key);
    if (failure && now - failure.at < this.#retryAfterFailureMs) return undefined;
    const pending = this.#build(key, build)
      .then(
        (entry) => {
          this.#failures.delete(key);
          return entry;
        },
        (err: unknown) => {
          if (!(err instanceof ApiError)) this.#recordFailure(key, err);
          throw err;
        },
      )
      .finally(() => this.#building.delete(key));
    // A failed rebuild behind a stale entry is seen by the first request that has to wait for one.
    pending.catch(() => {});
    this.#building.set(key, pending);
    return pending;
  }

  #recordFailure(key: string, error: unknown): void {
    this.#failures.delete(key);
    this.#failures.set(key, { at: Date.now(), error });
    // Oldest failure first; failures of keys nobody asks again would otherwise pile up.
    for (const k of this.#failures.keys()) {
      if (this.#failures.size <= this.#maxEntries) break;
      this.#failures.delete(k);
    }
  }

  async #build(key: string, build: () => Promise<unknown>): Promise<Entry> {
    const body = Buffer.from(JSON.stringify(await build()));
    const etag = etagOf(body);
    const now = Date.now();
    const entry: Entry = { key, body, etag, builtAt: now, expiresAt: now + this.#ttlMs, encoded: {}, bytes: body.length };
    this.#remove(key);
    this.#entries.set(key, entry);
    this.#bytes += entry.bytes;
    this.#evict(now);
    return entry;
  }

  /** Oldest build first (all entries live equally long): drop those no longer servable, and the oldest beyond the bounds. */
  #evict(now: number): void {
    for (const [key, entry] of this.#entries) {
      if (this.#entries.size <= this.#maxEntries && this.#bytes <= this.#maxBytes && now < entry.expiresAt + this.#keepMs) break;
      this.#remove(key);
    }
  }

  #remove(key: string): void {
    const entry = this.#entries.get(key);
    if (!entry) return;
    this.#entries.delete(key);
    this.#bytes -= entry.bytes;
  }
}

/**
 * The GET handler of a cached route: 200 with the cached bytes (compressed once per entry when the
 * client accepts it, so no request pays for compression), or 304 when the client's ETag matches.
 * A stale entry standing in for a failing build carries `Age` and `x-data-stale` (its age in
 * seconds); with nothing to stand in, a store failure is 503 unavailable, never a 500.
 */
export function cachedHandler(route: CachedRoute): RequestHandler {
  const cache = new ResponseCache(route.refreshSeconds * 1000);
  const failures = new BuildFailureLog(`GET ${route.path}`);
  // private: the body is behind an API key and the quota; a shared cache must not serve it to others.
  const cacheControl = `private, max-age=${route.refreshSeconds}`;
  const known = Object.keys(route.doc.query.shape);
  return async (req, res) => {
    // A key the endpoint does not take is a mistake to say, not to ignore: `ids[]=bitcoin` would otherwise answer every asset.
    const unknown = Object.keys(req.query).filter((name) => !known.includes(name));
    if (unknown.length > 0) {
      throw new ApiError(400, 'bad_request', `unknown parameter ${unknown.join(', ')}: ${known.length > 0 ? `this endpoint takes ${known.join(', ')}` : 'this endpoint takes none'}`);
    }
    const { key, build } = route.resolve(req);
    // Logged by the request that ran the failed build, not by each request that sees its result.
    const logged = () =>
      build().catch((err: unknown) => {
        if (!(err instanceof ApiError)) failures.report(requestLog(res), err);
        throw err;
      });
    const got = cache.get(key, logged);
    let served: Served;
    try {
      // Most requests find a fresh entry: no await, no extra turn of the event loop.
      served = got instanceof Promise ? await got : got;
    } catch (err) {
      if (err instanceof ApiError) throw err;
      throw storeUnavailable();
    }
    const { entry, stale } = served;
    const encoding = negotiatedEncoding(req, entry.body.length);
    if (stale) {
      const age = String(Math.floor((Date.now() - entry.builtAt) / 1000));
      res.setHeader('Age', age);
      res.setHeader('x-data-stale', age);
      // Past its refresh interval already: the client should ask again rather than reuse it.
      res.setHeader('Cache-Control', 'private, no-cache');
    } else {
      res.setHeader('Cache-Control', cacheControl);
    }
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
    res.send(await cache.encodedBody(entry, encoding));
  };
}
