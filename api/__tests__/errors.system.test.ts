import { Writable } from 'node:stream';
import express from 'express';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiError, errorHandler, methodNotAllowed, notFound } from '../errors.ts';
import { requestId } from '../requestId.ts';
import { listenOnLoopback, type LoopbackServer } from '../../test/support/apiHarness.ts';
import { get } from '../../test/support/harness.ts';

describe('error middleware', () => {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
      done();
    },
  });
  let server: LoopbackServer;
  let url: string;

  beforeAll(async () => {
    const app = express();
    app.use(requestId(pino({ level: 'info' }, sink)));
    app.get('/boom', () => {
      throw new Error('secret connection string postgres://u:p@db');
    });
    app.get('/async-boom', async () => {
      await Promise.resolve();
      throw new TypeError('undefined is not a function at internals.ts:12');
    });
    app.get('/teapot', () => {
      throw new ApiError(418, 'unavailable', 'short and stout', { 'x-extra': 'yes' });
    });
    app.route('/only-get').get((_req, res) => void res.json({ ok: true })).all(methodNotAllowed);
    app.use(notFound);
    app.use(errorHandler);
    server = await listenOnLoopback(app);
    url = server.url;
  });

  afterAll(() => server?.close());

  it.each(['/boom', '/async-boom'])('answers an unexpected error on %s with a generic 500 and logs it with the request id', async (path) => {
    lines.length = 0;
    const res = await get(url + path, { 'x-request-id': `trace-${path.slice(1)}` });
    expect(res.status).toBe(500);
    expect(res.json).toEqual({ error: { code: 'internal', message: expect.stringContaining('x-request-id'), status: 500 } });
    expect(res.text).not.toMatch(/secret|internals|stack|at /);
    expect(res.headers.get('x-request-id')).toBe(`trace-${path.slice(1)}`);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: 50, requestId: `trace-${path.slice(1)}`, path, msg: 'request failed' });
    expect(JSON.stringify(lines[0]?.err)).toMatch(/secret|internals/);
  });

  it('sends an ApiError as it is, with its headers, and does not log it', async () => {
    lines.length = 0;
    const res = await get(`${url}/teapot`);
    expect(res.status).toBe(418);
    expect(res.json).toEqual({ error: { code: 'unavailable', message: 'short and stout', status: 418 } });
    expect(res.headers.get('x-extra')).toBe('yes');
    expect(lines).toHaveLength(0);
  });

  it('answers 404 for unknown paths and 405 for other methods on known ones', async () => {
    expect((await get(`${url}/nowhere`)).json).toEqual({ error: { code: 'not_found', message: 'no endpoint at /nowhere', status: 404 } });
    const res = await get(`${url}/only-get`, {}, 'DELETE');
    expect(res.status).toBe(405);
    expect((res.json as { error: { code: string } }).error.code).toBe('method_not_allowed');
    expect((await get(`${url}/only-get`)).status).toBe(200);
  });
});
