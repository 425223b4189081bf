// The HTTP side of a cached route (responseCache.ts cachedHandler) in a bare Express app: headers,
// content negotiation, conditional GETs, stale bodies and outages. Expected bodies are decompressed
// with zlib and compared with the JSON the build returned.
import { once } from 'node:events';
import { request, type IncomingMessage } from 'node:http';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import express from 'express';
import { z } from 'zod';
import { pino } from 'pino';
import { afterAll, beforeAll, expect, test, vi } from 'vitest';
import { ApiError, errorHandler } from '../errors.ts';
import { requestId } from '../requestId.ts';
import { cachedHandler, type RouteDoc } from '../responseCache.ts';
import { listenOnLoopback, type LoopbackServer } from '../../test/support/apiHarness.ts';

/** What each key's build answers next: a value, or an error to throw. */
const answers = new Map<string, unknown>();
const builds = new Map<string, number>();
const lines: Record<string, unknown>[] = [];
let server: LoopbackServer;
let base: string;

beforeAll(async () => {
  const app = express();
  app.use(requestId(pino({ level: 'info' }, { write: (s: string) => void lines.push(JSON.parse(s)) })));
  app.get('/thing', cachedThing('/thing', 1));
  // For tests that count builds over several requests: a loaded machine can take a second between two.
  app.get('/steady', cachedThing('/steady', 3_600));
  app.use(errorHandler);
  server = await listenOnLoopback(app);
  base = server.url;
});

afterAll(() => server.close());

/** A cached route whose build answers what `answers` holds for its key, counted in `builds`. */
function cachedThing(path: string, refreshSeconds: number) {
  return cachedHandler({
    path,
    refreshSeconds,
    // Only the query's names matter here: a parameter the route does not take is refused.
    doc: { query: z.object({ key: z.string() }) } as unknown as RouteDoc,
    resolve: (req) => {
      const key = String(req.query.key);
      return {
        key,
        build: async () => {
          builds.set(key, (builds.get(key) ?? 0) + 1);
          const answer = answers.get(key);
          if (answer instanceof Error) throw answer;
          return answer;
        },
      };
    },
  });
}

/** The lines the route's build-failure log wrote. */
const storeFailureLines = () => lines.filter((l) => typeof l.msg === 'string' && l.msg.includes('GET /thing: the store did not answer'));

const large = { rows: Array.from({ length: 200 }, (_, i) => ({ id: i, name: `row-${i}` })) };

/** A GET that reads the bytes as sent (fetch would decompress them, and adds its own cache headers). */
async function get(key: string, headers: Record<string, string> = {}, path = '/thing'): Promise<{ status: number; header(name: string): string | undefined; body: Buffer }> {
  // A handler that never answers fails its test in seconds, not at the test's (or a mutation run's) timeout.
  const req = request(`${base}${path}?key=${key}`, { headers, signal: AbortSignal.timeout(5_000) });
  req.end();
  const [res] = (await once(req, 'response')) as [IncomingMessage];
  const chunks: Buffer[] = [];
  for await (const chunk of res) chunks.push(chunk as Buffer);
  const header = (name: string) => {
    const value = res.headers[name];
    return Array.isArray(value) ? value.join(', ') : value;
  };
  return { status: res.statusCode!, header, body: Buffer.concat(chunks) };
}

test('a small body is sent as it is, private for the refresh interval, with an ETag that a conditional GET matches', async () => {
  answers.set('small', { a: 1 });
  const res = await get('small', { 'accept-encoding': 'br, gzip' });
  expect(res.status).toBe(200);
  expect(JSON.parse(res.body.toString())).toEqual({ a: 1 });
  expect(res.header('cache-control')).toBe('private, max-age=1');
  expect(res.header('content-type')).toBe('application/json; charset=utf-8');
  expect(res.header('content-encoding')).toBeUndefined();
  expect(res.header('vary')).toBeUndefined();
  expect(res.header('etag')).toMatch(/^"[A-Za-z0-9_-]{27}"$/);
  const again = await get('small', { 'if-none-match': res.header('etag')! });
  expect(again.status).toBe(304);
  expect(builds.get('small')).toBe(1);
});

test('a large body goes as brotli when accepted, else gzip, else as it is; each form with its own ETag', async () => {
  answers.set('large', large);
  const plain = await get('large', { 'accept-encoding': 'identity' }, '/steady');
  expect(plain.header('content-encoding')).toBeUndefined();
  expect(plain.header('vary')).toBe('Accept-Encoding');
  expect(JSON.parse(plain.body.toString())).toEqual(large);
  const etag = plain.header('etag')!;

  const br = await get('large', { 'accept-encoding': 'gzip;q=0.9, br' }, '/steady');
  expect(br.header('content-encoding')).toBe('br');
  expect(br.header('etag')).toBe(`${etag.slice(0, -1)}-br"`);
  expect(JSON.parse(brotliDecompressSync(br.body).toString())).toEqual(large);
  expect(br.body.length).toBeLessThan(plain.body.length);

  const gzip = await get('large', { 'accept-encoding': 'gzip' }, '/steady');
  expect(gzip.header('content-encoding')).toBe('gzip');
  expect(gzip.header('etag')).toBe(`${etag.slice(0, -1)}-gzip"`);
  expect(JSON.parse(gunzipSync(gzip.body).toString())).toEqual(large);

  // A client that names no encoding gets none (Express would otherwise pick the first offered).
  expect((await get('large', {}, '/steady')).header('content-encoding')).toBeUndefined();
  const deflateOnly = await get('large', { 'accept-encoding': 'deflate' }, '/steady');
  expect(deflateOnly.header('content-encoding')).toBeUndefined();
  expect(builds.get('large')).toBe(1);
});

test.each([
  // What browsers send: equal weights, brotli named last; brotli wins the tie.
  ['gzip, deflate, br', 'br'],
  ['GZIP, BR', 'br'],
  ['gzip;q=1.0, br;q=1', 'br'],
  ['*', 'br'],
  // Explicit weights are honoured.
  ['br;q=0.1, gzip', 'gzip'],
  ['br;q=0.1, *', 'gzip'],
  ['br;q=0, gzip', 'gzip'],
  ['br;q=0', undefined],
  ['br;q=0, *', 'gzip'],
  // A parameter other than the weight (outside RFC 9110's grammar) is ignored.
  ['br;level=1, gzip;q=0.5', 'br'],
  ['gzip;q=0.5, identity', undefined],
  ['gzip;q=0.5, identity;q=0.2', 'gzip'],
  ['identity', undefined],
  ['', undefined],
  [undefined, undefined],
] as const)('Accept-Encoding %j: the body goes as %s', async (acceptEncoding, expected) => {
  answers.set('negotiated', large);
  const plain = await get('negotiated');
  expect(plain.header('content-encoding')).toBeUndefined();
  const res = await get('negotiated', acceptEncoding === undefined ? {} : { 'accept-encoding': acceptEncoding });
  expect(res.header('content-encoding')).toBe(expected);
  const decode = { br: brotliDecompressSync, gzip: gunzipSync, none: (body: Buffer) => body };
  expect(decode[expected ?? 'none'](res.body).equals(plain.body)).toBe(true);
});

test('bodies up to 1024 bytes are never compressed; from 1025 on they are', async () => {
  // A JSON string of n characters is n + 2 bytes.
  answers.set('1024', 'x'.repeat(1022));
  answers.set('1025', 'x'.repeat(1023));
  const at = await get('1024', { 'accept-encoding': 'br' });
  expect([at.body.length, at.header('content-encoding'), at.header('vary')]).toEqual([1024, undefined, undefined]);
  const above = await get('1025', { 'accept-encoding': 'br' });
  expect([above.header('content-encoding'), above.header('vary')]).toEqual(['br', 'Accept-Encoding']);
});

test('brotli is made at quality 5, and once per entry', async () => {
  answers.set('quality', large);
  const first = await get('quality', { 'accept-encoding': 'br' });
  const second = await get('quality', { 'accept-encoding': 'br' });
  expect(second.body.equals(first.body)).toBe(true);
  // Quality 11 (the default) and 5 give different bytes for this body; 5 is what the handler promises.
  const { brotliCompressSync, constants } = await import('node:zlib');
  const at5 = brotliCompressSync(Buffer.from(JSON.stringify(large)), { params: { [constants.BROTLI_PARAM_QUALITY]: 5 } });
  expect(first.body.equals(at5)).toBe(true);
});

test('a store failure with nothing cached is 503 unavailable; an ApiError is the answer as it is', async () => {
  answers.set('down', new Error('store down'));
  const down = await get('down');
  expect(down.status).toBe(503);
  expect(JSON.parse(down.body.toString())).toMatchObject({ error: { code: 'unavailable' } });
  expect(storeFailureLines().length).toBeGreaterThan(0);
  answers.set('bad', new ApiError(400, 'bad_request', 'no such thing'));
  const bad = await get('bad');
  expect(bad.status).toBe(400);
  expect(JSON.parse(bad.body.toString())).toMatchObject({ error: { code: 'bad_request', message: 'no such thing' } });
});

test('a body served stale for a failing build says its age, and asks the client not to reuse it', async () => {
  answers.set('stale', { v: 1 });
  expect((await get('stale')).status).toBe(200);
  vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + 3_500 });
  try {
    answers.set('stale', new Error('store down'));
    const res = await get('stale');
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body.toString())).toEqual({ v: 1 });
    expect(res.header('age')).toBe('3');
    expect(res.header('x-data-stale')).toBe('3');
    expect(res.header('cache-control')).toBe('private, no-cache');
  } finally {
    vi.useRealTimers();
  }
});

test('an ApiError from a build is neither logged as a store failure nor counted among those not logged', async () => {
  // A minute on: whatever earlier tests logged, the log's interval (10 s) is open.
  vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + 60_000 });
  try {
    answers.set('outage', new Error('store down'));
    expect((await get('outage')).status).toBe(503);
    const logged = storeFailureLines().length;
    answers.set('refused', new ApiError(404, 'not_found', 'no such thing'));
    expect((await get('refused')).status).toBe(404);
    // The next store failure, once the interval is over, is logged as the first since the outage's.
    vi.setSystemTime(Date.now() + 10_000);
    answers.set('outage-again', new Error('store down'));
    expect((await get('outage-again')).status).toBe(503);
    expect(storeFailureLines().slice(logged)).toMatchObject([{ notLoggedSincePrevious: 0 }]);
  } finally {
    vi.useRealTimers();
  }
});
