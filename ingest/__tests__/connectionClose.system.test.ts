// A connection that is closing reads what arrives within a grace, then nothing more
// (ingest/connection.ts): a collector far behind its sockets otherwise parsed its whole backlog
// before its stop could finish, while a quick one still gets the venue's last frames.
import { once } from 'node:events';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { WebSocketServer } from 'ws';
import { VenueConnection } from '../connection.ts';
import { silentLog } from '../../test/support/harness.ts';
import { until } from '../../test/support/until.ts';

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

/** Starts a connection to the burst; `onMessage` is told how many were handed on and whether close() began; close() is called from within the second message. */
async function closeWithinBurst(closeReadGraceMs: number, work: () => void): Promise<{ handed: number; handedAfterClose: number }> {
  let handed = 0;
  let handedAfterClose = 0;
  let closing: Promise<void> | undefined;
  const connection = new VenueConnection({
    url,
    log: silentLog,
    subscribeMessages: () => [],
    keepAlive: { pingEveryMs: 60_000, staleAfterMs: 60_000 },
    sendsPerSecond: 10,
    closeReadGraceMs,
    onMessage: () => {
      handed++;
      if (closing) handedAfterClose++;
      work();
      // The rest of the burst is already on our side, or on its way.
      if (handed === 2) closing = connection.close();
    },
  });
  connection.start();
  await until(() => closing !== undefined, 'the second message');
  await closing;
  return { handed, handedAfterClose };
}

test('what arrives within the grace after close() is still handed on: a quick reader gets the whole burst', async () => {
  const { handed } = await closeWithinBurst(5_000, () => {});
  expect(handed).toBe(burst);
});

test('past the grace, a reader far behind gets nothing more of the burst: each message takes it 5 ms, the grace is 100 ms', async () => {
  const { handed, handedAfterClose } = await closeWithinBurst(100, () => {
    const start = performance.now();
    while (performance.now() - start < 5) {}
  });
  // About 20 in the grace (100 ms of 5 ms each), then none of the remaining ~1,980.
  expect(handedAfterClose).toBeGreaterThan(0);
  expect(handed).toBeLessThan(100);
});
