// The access log of observeRequests: one line per request, at the configured level, 5xx at warn.
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import express from 'express';
import { pino } from 'pino';
import { expect, test } from 'vitest';
import { observeRequests, type AccessLog } from '../health.ts';
import { createMetrics } from '../metrics.ts';
import { until } from '../../test/support/until.ts';

async function serveWithAccessLog(access: Omit<AccessLog, 'log'>, logLevel: string): Promise<{ url: string; lines: Record<string, unknown>[]; finished(): number; close(): void }> {
  const lines: Record<string, unknown>[] = [];
  let finished = 0;
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
      done();
    },
  });
  const app = express();
  app.use(observeRequests(createMetrics(), { ...access, log: pino({ level: logLevel }, sink) }));
  // Registered after the access log's own: a response counted here has had its line written (or not).
  app.use((_req, res, next) => {
    res.once('finish', () => void (finished += 1));
    next();
  });
  // What api/requestId.ts does first in the API.
  app.use((_req, res, next) => {
    res.locals.requestId = 'req-1';
    next();
  });
  app.get('/v1/coins/:id', (_req, res) => void res.json({}));
  app.get('/broken', (_req, res) => void res.status(503).json({}));
  const server = app.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, lines, finished: () => finished, close: () => server.close() };
}

/** The response's finish event (and so the log line) may come just after the client has the body: until `n` responses have finished. */
async function settle(server: { finished(): number }, n: number): Promise<void> {
  await until(() => server.finished() >= n, `${n} responses finished`);
}

test('each request is one line with the request id, method, route template, status and ms, at the configured level', async () => {
  const server = await serveWithAccessLog({ level: 'info' }, 'info');
  try {
    await fetch(`${server.url}/v1/coins/bitcoin`);
    await fetch(`${server.url}/nowhere`, { method: 'POST' });
    await settle(server, 2);
    expect(server.lines.map(({ level, requestId, method, route, status }) => ({ level, requestId, method, route, status }))).toEqual([
      { level: 30, requestId: 'req-1', method: 'GET', route: '/v1/coins/:id', status: 200 },
      { level: 30, requestId: 'req-1', method: 'POST', route: 'unmatched', status: 404 },
    ]);
    expect(server.lines.every((l) => typeof l.ms === 'number' && l.ms >= 0)).toBe(true);
  } finally {
    server.close();
  }
});

test('at the default debug level a process logging at info writes no access line, except a 5xx at warn', async () => {
  const server = await serveWithAccessLog({ level: 'debug' }, 'info');
  try {
    await fetch(`${server.url}/v1/coins/bitcoin`);
    await fetch(`${server.url}/broken`);
    await settle(server, 2);
    expect(server.lines.map(({ level, route, status }) => ({ level, route, status }))).toEqual([{ level: 40, route: '/broken', status: 503 }]);
  } finally {
    server.close();
  }
});
