// The whole embedded service (`main.ts all`) as a process, stopped with SIGTERM while its store hangs
// (the fault route, MDS_FAULT_INJECTION): the trade and book sinks each wait on an insert that
// would not answer for two minutes. The process must be gone within 20 s (Kubernetes kills at 30 s),
// its log naming the parts it left behind at its one shutdown deadline (infra/roles/lifecycle.ts).
// The process runs with a short SHUTDOWN_DEADLINE_MS: what it takes past its deadline, added to the
// default deadline, must stay under those 20 s.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, expect, test } from 'vitest';
import { loadConfig } from '../config.ts';
import { startSimulator, type Simulator } from '../../simulator/simulator.ts';
import { metricSum, serviceEnv } from '../../test/soak.ts';
import { freeLoopbackPort } from '../../test/support/ports.ts';
import { copyStoreTemplate } from '../../test/support/storeTemplate.ts';
import { until } from '../../test/support/until.ts';

const root = fileURLToPath(new URL('../../', import.meta.url));
const dataDir = mkdtempSync(join(tmpdir(), 'mds-shutdown-'));
// The run's migrated store (test/support/storeTemplate.ts) where there is one: the service's own
// migration then finds nothing to apply.
copyStoreTemplate(dataDir);
/**
 * The deadline the process runs with, and the one it has by default (infra/config.ts). Longer than
 * the API's own wait for requests in flight (5 s, api/server.ts), as the default is: the API's stop
 * cannot use it all up before the sinks' stage.
 */
const deadlineMs = 6_000;
const defaultDeadlineMs = loadConfig({}).SHUTDOWN_DEADLINE_MS;
let simulator: Simulator | undefined;
let child: ChildProcess | undefined;
afterAll(async () => {
  child?.kill('SIGKILL');
  await simulator?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

interface LogLine {
  msg: string;
  part?: string;
  deadlineMs?: number;
}

test('SIGTERM with the store hung: the process exits within 20 s, and its log names the parts that did not stop', async () => {
  simulator = await startSimulator({ seed: 11, tickMs: 250, tradesPerSecondPerMarket: 4, venues: ['binance'], tickers: ['BTC'] });
  const port = await freeLoopbackPort();
  const base = `http://127.0.0.1:${port}`;
  // An insert that hangs outlasts any shutdown deadline: only the deadline can end the stop.
  const env = {
    ...serviceEnv(simulator, { busMaxRecordsPerTopic: 100_000 }, port, dataDir, 'a-key-secret-for-the-shutdown-test-0123456789'),
    STORE_INSERT_TIMEOUT_MS: '120000',
    AGGREGATE_BATCH_MS: '200',
    SHUTDOWN_DEADLINE_MS: String(deadlineMs),
  };
  const service = spawn(process.execPath, [join(root, 'infra/roles/main.ts'), 'all', '--venues', 'binance', '--assets', 'bitcoin'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  child = service;
  let output = '';
  service.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  service.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  // 'close': the process has exited and everything it printed has been read.
  const closed = new Promise<number | null>((resolve) => service.once('close', (code) => resolve(code)));
  const context = () => output.slice(-3_000);
  const metric = async (name: string, labels: string) => metricSum(await fetch(`${base}/metrics`).then((r) => r.text()), name, labels);

  // Trades and books stored: the sinks know their markets, so their next inserts go out at once.
  for (const table of ['trades', 'market_quality']) {
    await until(async () => (await metric('mds_store_inserted_rows_total', `table="${table}"`).catch(() => 0)) > 0, `rows inserted into ${table}`, { timeoutMs: 120_000, everyMs: 250, context });
  }
  const fault = await fetch(`${base}/__faults/store`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ fault: 'hang' }) });
  expect(fault.status).toBe(200);
  // With the store hung a scrape answers only once its disk gauge's query gives up (STORE_QUERY_TIMEOUT_MS,
  // infra/diskSpace.ts), but reads the in-flight gauges as it starts: a scrape is started at every
  // poll, without waiting for the ones before, and the first to see both inserts in flight ends the wait.
  const inFlight = { trades: 0, market_quality: 0 };
  const scrapes = new AbortController();
  const scrape = async () => {
    const text = await fetch(`${base}/metrics`, { signal: scrapes.signal }).then((r) => r.text());
    for (const table of ['trades', 'market_quality'] as const) inFlight[table] = Math.max(inFlight[table], metricSum(text, 'mds_store_inserts_in_flight', `table="${table}"`));
  };
  const bothHung = () => {
    if (inFlight.trades > 0 && inFlight.market_quality > 0) return true;
    void scrape().catch(() => {});
    return false;
  };
  await until(bothHung, 'an insert into trades and one into market_quality hung', { timeoutMs: 45_000, everyMs: 250, context: () => `${JSON.stringify(inFlight)}\n${context()}` });
  // The scrapes still waiting are cut: the API's stop would wait for them (requests in flight) and
  // hold back the stages after it, which the deadline is to find stuck in their inserts.
  scrapes.abort();

  const signalledAt = performance.now();
  service.kill('SIGTERM');
  const code = await closed;
  const tookMs = performance.now() - signalledAt;
  child = undefined;

  // The hung parts held the stop to the deadline, and the process was gone soon after it: with the
  // default deadline (15 s) it would be gone within 20 s.
  expect(tookMs, context()).toBeGreaterThanOrEqual(deadlineMs);
  expect(defaultDeadlineMs).toBe(15_000);
  expect(defaultDeadlineMs + (tookMs - deadlineMs), context()).toBeLessThan(20_000);
  expect(code, context()).toBe(0);
  const lines = output.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as LogLine);
  expect(lines.find((l) => l.msg === 'shutting down')?.deadlineMs).toBe(deadlineMs);
  const late = lines.filter((l) => l.msg === 'part did not stop by the shutdown deadline; exiting without it').map((l) => l.part);
  expect(late, context()).toEqual(expect.arrayContaining(['trade-sink', 'book-sink']));
  expect(lines.map((l) => l.msg)).toContain('stopped at the shutdown deadline');
}, 180_000);
