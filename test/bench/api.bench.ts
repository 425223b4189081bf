// API throughput: requests/s and p99 latency of /v1/prices, /v1/coins and /v1/coins/bitcoin/ohlc
// at 64 connections, each next to a bare Express route returning a cached body of the same size,
// measured in the same run (these machines are shared and noisy: read the ratio, not the rate).
// Target: every endpoint at least 0.70 of its baseline. The servers run in a child process
// (apiServer.ts); autocannon runs here.
// Usage: npm run bench:api [-- seconds]   (default 8 per measurement)
import { join } from 'node:path';
import autocannon from 'autocannon';
import { spawnReporting } from './reportingChild.ts';

const seconds = Number(process.argv[2] ?? 8);
const connections = 64;

const { child: server, report: ready } = await spawnReporting<{ api: string; bare: string; key: string; sizes: Record<string, number> }>(
  [join(import.meta.dirname, 'apiServer.ts')],
  'the bench server',
);

interface Figures {
  rps: number;
  p99: number;
  errors: number;
}

async function load(url: string, headers: Record<string, string>, duration: number): Promise<Figures> {
  const r = await autocannon({ url, connections, duration, headers });
  return { rps: r.requests.average, p99: r.latency.p99, errors: r.errors + r.timeouts + r.non2xx };
}

const headers = { 'x-api-key': ready.key };
console.log(`API at ${connections} connections, ${seconds} s per measurement, node ${process.version}`);
console.log('endpoint                     body B   req/s    p99 ms | baseline req/s  p99 ms | ratio');
let failed = false;
for (const [path, bytes] of Object.entries(ready.sizes)) {
  // Warm both (JIT, the response cache), then measure the baseline right before the endpoint.
  await load(ready.bare + path, {}, 1);
  await load(ready.api + path, headers, 1);
  const base = await load(ready.bare + path, {}, seconds);
  const api = await load(ready.api + path, headers, seconds);
  const ratio = api.rps / base.rps;
  if (api.errors > 0 || base.errors > 0) failed = true;
  console.log(
    `${path.padEnd(28)} ${String(bytes).padStart(6)} ${api.rps.toFixed(0).padStart(7)} ${String(api.p99).padStart(8)} | ` +
      `${base.rps.toFixed(0).padStart(14)} ${String(base.p99).padStart(7)} | ${ratio.toFixed(2)}${ratio < 0.7 ? '  (below the 0.70 target)' : ''}` +
      (api.errors + base.errors > 0 ? `  errors: api ${api.errors}, baseline ${base.errors}` : ''),
  );
}
server.kill('SIGTERM');
if (failed) process.exitCode = 1;
