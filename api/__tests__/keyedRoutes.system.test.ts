import express, { type RequestHandler } from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiError, errorHandler, notFound } from '../errors.ts';
import { keyedRoutes } from '../keyedRoutes.ts';
import { listenOnLoopback, type LoopbackServer } from '../../test/support/apiHarness.ts';
import { get } from '../../test/support/harness.ts';

/** Answers what the dispatcher gave it: the route template, the parameters and what the guards saw. */
const echo: RequestHandler = (req, res) => void res.json({ route: res.locals.route, params: req.params, guarded: res.locals.guarded });

describe('keyedRoutes: the endpoints found in one step', () => {
  let server: LoopbackServer;
  let url: string;

  beforeAll(async () => {
    const app = express();
    // A guard standing in for the key check: no `x-key`, 401; otherwise it marks the request.
    const guard: RequestHandler = (req, res, next) => {
      if (!req.headers['x-key']) throw new ApiError(401, 'missing_key', 'no key');
      res.locals.guarded = true;
      next();
    };
    // An asynchronous guard, as the quota is: it refuses `x-key: spent` with a rejection.
    const asyncGuard: RequestHandler = async (req, _res, next) => {
      await Promise.resolve();
      if (req.headers['x-key'] === 'spent') throw new ApiError(429, 'quota_exceeded', 'spent');
      next();
    };
    const failing: RequestHandler = async () => {
      await Promise.resolve();
      throw new ApiError(503, 'unavailable', 'store down');
    };
    app.use(
      keyedRoutes(
        [guard, asyncGuard],
        [
          { path: '/v1/coins', get: echo },
          { path: '/v1/coins/:id', get: echo },
          { path: '/v1/coins/:id/ohlc', get: echo },
          { path: '/v1/fear-greed/history', get: echo },
          { path: '/v1/failing', get: failing },
        ],
      ),
    );
    app.get('/after', (_req, res) => void res.json({ after: true }));
    app.use(notFound);
    app.use(errorHandler);
    server = await listenOnLoopback(app);
    url = server.url;
  });

  afterAll(() => server?.close());

  const keyed = { 'x-key': 'k' };

  it('runs the guards, then the answer of the route the path names, with its template', async () => {
    expect((await get(`${url}/v1/coins?limit=5`, keyed)).json).toEqual({ route: '/v1/coins', params: {}, guarded: true });
    expect((await get(`${url}/v1/fear-greed/history`, keyed)).json).toEqual({ route: '/v1/fear-greed/history', params: {}, guarded: true });
    expect((await get(`${url}/v1/coins/bitcoin`, keyed)).json).toEqual({ route: '/v1/coins/:id', params: { id: 'bitcoin' }, guarded: true });
    expect((await get(`${url}/v1/coins/bitcoin/ohlc`, keyed)).json).toEqual({ route: '/v1/coins/:id/ohlc', params: { id: 'bitcoin' }, guarded: true });
  });

  it('matches as Express does: literals in any case, one trailing slash, parameters %-decoded and kept as sent', async () => {
    expect((await get(`${url}/V1/Coins/`, keyed)).json).toMatchObject({ route: '/v1/coins' });
    expect((await get(`${url}/v1/COINS/Wrapped%20Bitcoin/OHLC/`, keyed)).json).toEqual({ route: '/v1/coins/:id/ohlc', params: { id: 'Wrapped Bitcoin' }, guarded: true });
  });

  it('hands every other path to the next layer: an empty parameter, more segments, another path', async () => {
    for (const path of ['/v1/coins//ohlc', '/v1/coins/bitcoin/ohlc/extra', '/v1/coin', '/v1/coins//']) {
      const res = await get(url + path, keyed);
      expect([path, res.status]).toEqual([path, 404]);
    }
    expect((await get(`${url}/after`)).json).toEqual({ after: true });
  });

  it('answers a bad %-escape 400 on a path it has, and leaves it to the next layer on one it has not', async () => {
    const bad = await get(`${url}/v1/coins/%E0%A4%A/ohlc`, keyed);
    expect(bad.status).toBe(400);
    expect(bad.json).toEqual({ error: { code: 'bad_request', message: 'malformed percent-encoding in the path', status: 400 } });
    expect((await get(`${url}/v1/coins/%E0%A4%A/nowhere`, keyed)).status).toBe(404);
  });

  it('runs the guards before anything else, for every method: a refusal wins over 405', async () => {
    expect((await get(`${url}/v1/coins`)).status).toBe(401);
    expect((await get(`${url}/v1/coins`, {}, 'DELETE')).status).toBe(401);
    expect((await get(`${url}/v1/coins`, { 'x-key': 'spent' })).status).toBe(429);
    const other = await get(`${url}/v1/coins/bitcoin`, keyed, 'POST');
    expect(other.status).toBe(405);
    expect(other.headers.get('allow')).toBe('GET, HEAD');
  });

  it('answers HEAD as GET, and sends an answer that fails to the error handler', async () => {
    const head = await get(`${url}/v1/coins`, keyed, 'HEAD');
    expect(head.status).toBe(200);
    expect(head.text).toBe('');
    const failed = await get(`${url}/v1/failing`, keyed);
    expect(failed.status).toBe(503);
    expect(failed.json).toEqual({ error: { code: 'unavailable', message: 'store down', status: 503 } });
  });
});
