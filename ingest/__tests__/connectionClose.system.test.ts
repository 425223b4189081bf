// A connection that is closing reads nothing more (ingest/connection.ts): frames the venue sent
// before our close, still buffered on our side, are not handed on. A collector far behind its
// sockets otherwise parsed its whole backlog before its stop could finish.
import { once } from 'node:events';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { WebSocketServer } from 'ws';
import { VenueConnection } from '../connection.ts';
import { silentLog } from '../../test/support/harness.ts';

let server: WebSocketServer;
let url: string;
const burst = 2_000;

beforeAll(async () => {
  server = new WebSocketServer({ port: 0, host: '127.0.0.1' });
  await once(server, 'listening');
  url = `ws://127.0.0.1:${(server.address() as { port: number }).port}`;
  // A burst sent at once: it reaches the client in a few TCP reads, parsed frame by frame there.
  server.on('connection', (socket) => {
    for (let i = 0; i < burst; i++) socket.send(`{"n":${i}}`);
  });
});

afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

test('after close() begins, no message of the burst already received is handed on', async () => {
  let handed = 0;
  let handedAfterClose = 0;
  let closing: Promise<void> | undefined;
  const connection = new VenueConnection({
    url,
    log: silentLog,
    subscribeMessages: () => [],
    keepAlive: { pingEveryMs: 60_000, staleAfterMs: 60_000 },
    sendsPerSecond: 10,
    onMessage: () => {
      handed++;
      if (closing) handedAfterClose++;
      // Close from within the second message: the rest of the burst is already on our side.
      if (handed === 2) closing = connection.close();
    },
  });
  connection.start();
  await new Promise<void>((resolve) => {
    const check = setInterval(() => closing && (clearInterval(check), resolve()), 5);
  });
  await closing;
  expect(handed).toBe(2);
  expect(handedAfterClose).toBe(0);
});
