// The last log lines before an exit are written (infra/log.ts). A worker thread's reach stdout when
// they are logged, not when its event loop next turns: a collectors' thread that logged and then
// stayed busy past the shutdown deadline lost its last lines when the process exited. The main
// thread's are flushed at exit. Each case runs in a child process that exits.
import { expect, test } from 'vitest';
import { runModuleScript } from '../../test/support/moduleScript.ts';

const logTs = JSON.stringify(new URL('../log.ts', import.meta.url).href);

/** A worker that logs three lines, then keeps its event loop busy for good. */
const busyWorker = `
import { createLogger } from ${logTs};
const log = createLogger('info', { thread: 'worker' }, false);
for (const n of [1, 2, 3]) log.info({ n }, 'logged before the busy loop');
const start = Date.now();
while (Date.now() - start < 60_000) {}
`;

const parent = `
import { Worker } from 'node:worker_threads';
new Worker(new URL('data:text/javascript,' + encodeURIComponent(${JSON.stringify(busyWorker)})));
setTimeout(() => process.exit(0), 1_500);
`;

test("the lines a worker logged just before its event loop stayed busy are all written when the process exits", async () => {
  const { out } = await runModuleScript(parent);
  const lines = out.split('\n').filter(Boolean).map((l) => JSON.parse(l) as { n: number; msg: string });
  expect(lines.map((l) => l.n)).toEqual([1, 2, 3]);
}, 30_000);

test('the lines the main thread logged just before process.exit are all written', async () => {
  const script = `
import { createLogger } from ${logTs};
const log = createLogger('info', {}, false);
for (let n = 1; n <= 200; n++) log.info({ n }, 'logged before the exit');
process.exit(0);
`;
  const { out } = await runModuleScript(script);
  const lines = out.split('\n').filter(Boolean).map((l) => JSON.parse(l) as { n: number });
  expect(lines.map((l) => l.n)).toEqual(Array.from({ length: 200 }, (_, i) => i + 1));
}, 30_000);
