// The service split as an operator runs it at scale, every part its own process: two migrations
// started together, then collectors (ingest), the aggregator, the jobs and two API replicas, over
// Kafka (the Kafka-protocol mock of test/run.sh), one ClickHouse store (a ClickHouse HTTP endpoint
// over chDB: test/support/clickhouseFront.ts) and Redis (the shared quota). The collectors read the market simulator, reached through the
// VENUE_<ID>_WS_URL / _REST_URL overrides as real venues would be. The tests run in order on one
// deployment: a measured price and one quota on both replicas, then the aggregator killed and
// replaced, then a key revoked.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { keyPrefixLength } from '../api/keys.ts';
import { venueEnvName } from '../ingest/venue.ts';
import { startSimulator, type SimulatedVenueId, type Simulator } from '../simulator/simulator.ts';
import { untilValue } from './support/until.ts';

const root = fileURLToPath(new URL('../', import.meta.url));
const brokers = process.env.MDS_TEST_KAFKA_BROKERS;
const redisUrl = process.env.MDS_TEST_REDIS_URL;
const venues: SimulatedVenueId[] = ['binance', 'okx', 'coinbase', 'kraken'];

interface Started {
  name: string;
  child: ChildProcess;
  output: string;
}
const started: Started[] = [];
const dirs: string[] = [];
let simulator: Simulator | undefined;

/** Starts `node <args>`; resolves with the process once `ready` matches what it printed. */
function start(name: string, args: string[], env: NodeJS.ProcessEnv, ready: RegExp, timeoutMs = 90_000): Promise<Started & { match: RegExpMatchArray }> {
  const child = spawn(process.execPath, args, { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
  const proc: Started = { name, child, output: '' };
  started.push(proc);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${name} did not get ready in ${timeoutMs} ms:\n${proc.output.slice(-3000)}`)), timeoutMs);
    const onData = (chunk: Buffer) => {
      proc.output += chunk.toString();
      const match = proc.output.match(ready);
      if (match) {
        clearTimeout(timer);
        resolve({ ...proc, match });
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`${name} exited (${code ?? signal}) before it was ready:\n${proc.output.slice(-3000)}`));
    });
  });
}

/** Runs `node <args>` to its end; its stdout, or a rejection with everything it printed. */
function runToEnd(args: string[], env: NodeJS.ProcessEnv): Promise<string> {
  const child = spawn(process.execPath, args, { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  return new Promise((resolve, reject) => child.once('close', (code) => (code === 0 ? resolve(stdout) : reject(new Error(`node ${args.join(' ')} exited ${code}:\n${stdout}\n${stderr}`)))));
}

/** The shared untilValue, every 500 ms, naming each process's last output when it fails. */
const until = <T>(what: string, probe: () => Promise<T | undefined>, timeoutMs: number): Promise<T> =>
  untilValue(probe, what, { timeoutMs, everyMs: 500, context: () => started.map((p) => `--- ${p.name}\n${p.output.slice(-1500)}`).join('\n') });

let env: NodeJS.ProcessEnv;
let apis: string[] = [];
let store = '';
let key = '';

beforeAll(async () => {
  expect(brokers, 'MDS_TEST_KAFKA_BROKERS must point at a Kafka-protocol broker (npm test starts one)').toBeTruthy();
  expect(redisUrl, 'MDS_TEST_REDIS_URL must point at a redis-server (npm test starts one)').toBeTruthy();
  const dataDir = mkdtempSync(join(tmpdir(), 'mds-split-'));
  dirs.push(dataDir);
  const front = await start('clickhouse-front', ['test/support/clickhouseFront.ts', dataDir], process.env, /listening on (http:\/\/\S+)/);
  store = front.match[1]!;

  simulator = await startSimulator({ seed: 7, tickMs: 250, tradesPerSecondPerMarket: 2, venues, tickers: ['BTC', 'ETH'] });
  const base: NodeJS.ProcessEnv = { ...process.env };
  for (const name of ['MDS_DATA_DIR', 'DEMO_API_KEY', 'LOG_LEVEL']) delete base[name];
  env = {
    ...base,
    PORT: '0',
    LOG_LEVEL: 'info',
    CLICKHOUSE_URL: front.match[1],
    KAFKA_BROKERS: brokers,
    // The group gives up on the killed aggregator after 6 s (the broker's floor), not the default 30 s.
    KAFKA_SESSION_TIMEOUT_MS: '6000',
    REDIS_URL: redisUrl,
    // Every replica verifies keys with the same secret.
    API_KEY_SECRET: randomBytes(32).toString('hex'),
    // Four venues: the index needs several to measure a price.
    INDEX_MIN_VENUES: '2',
  };
  for (const venue of venues) {
    env[venueEnvName(venue, 'WS')] = simulator.endpoints(venue).ws;
    env[venueEnvName(venue, 'REST')] = simulator.endpoints(venue).rest;
  }
  // Two `npm run migrate` started together (two deploy jobs): the lock lets each migration apply once.
  await Promise.all([runToEnd(['infra/roles/main.ts', 'migrate'], env), runToEnd(['infra/roles/main.ts', 'migrate'], env)]);
  const applied = await fetch(`${front.match[1]}/?database=mds`, {
    method: 'POST',
    body: 'SELECT name, count() AS n FROM schema_migrations GROUP BY name FORMAT JSONEachRow',
  });
  const perMigration = (await applied.text()).trim().split('\n').map((line) => JSON.parse(line) as { name: string; n: number });
  expect(perMigration.length).toBeGreaterThan(60);
  expect(perMigration.filter((m) => Number(m.n) !== 1)).toEqual([]);

  const main = 'infra/roles/main.ts';
  const listening = /"url":"(http:\/\/[^"]+)"[^\n]*"msg":"api listening"/;
  const servesOps = /"msg":"health and metrics listening"/;
  await Promise.all([
    start('ingest', [main, 'ingest', '--venues', venues.join(','), '--assets', 'bitcoin,ethereum'], env, servesOps),
    start('aggregate', [main, 'aggregate'], env, servesOps),
    start('jobs', [main, 'jobs'], env, servesOps),
  ]);
  const replicas = await Promise.all([start('api-1', [main, 'api'], env, listening), start('api-2', [main, 'api'], env, listening)]);
  apis = replicas.map((r) => r.match[1]!);
}, 180_000);

afterAll(async () => {
  await Promise.all(
    started.map(
      ({ child }) =>
        new Promise<void>((resolve) => {
          if (child.exitCode !== null || child.signalCode !== null) return resolve();
          const kill = setTimeout(() => child.kill('SIGKILL'), 20_000);
          child.once('exit', () => {
            clearTimeout(kill);
            resolve();
          });
          child.kill('SIGTERM');
        }),
    ),
  );
  await simulator?.close();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
}, 60_000);

/** Spec 2.5. */
interface PriceEntry {
  assetId: string;
  price: number;
  measured: boolean;
  updatedAt: number;
}

test('collectors, aggregator, jobs and two API replicas in their own processes serve one measured price, one quota', async () => {
  key = (await runToEnd(['api/keysCli.ts', 'create', '--name', 'split-deployment'], env)).trim().split('\n').at(-1)!;
  expect(key.length).toBeGreaterThanOrEqual(32);
  const get = (api: string, path: string) => fetch(`${api}${path}`, { headers: { 'x-api-key': key } });

  // Trades went collector -> Kafka -> aggregator -> store, and the index runner measured them; both replicas read it.
  const measured = await until(
    'a measured bitcoin price on both replicas',
    async () => {
      const answers = await Promise.all(
        apis.map(async (api) => {
          const response = await get(api, '/v1/prices?ids=bitcoin');
          if (response.status !== 200) throw new Error(`${api}: ${response.status} ${await response.text()}`);
          return ((await response.json()) as { prices: PriceEntry[] }).prices[0];
        }),
      );
      return answers.every((a) => a?.measured) ? answers : undefined;
    },
    120_000,
  );
  const reference = simulator!.reference('BTC', 'USD');
  for (const entry of measured) expect(Math.abs(entry!.price / reference - 1)).toBeLessThan(0.02);

  // Both replicas count one key's requests in the one Redis quota.
  const remaining = async (api: string) => Number((await get(api, '/v1/prices?ids=ethereum')).headers.get('x-ratelimit-remaining'));
  const first = await remaining(apis[0]!);
  const second = await remaining(apis[1]!);
  expect(second).toBe(first - 1);

  // The replicas see the pipeline through the store: ready once the index is fresh.
  await until('both replicas ready', async () => ((await Promise.all(apis.map(async (api) => (await fetch(`${api}/ready`)).status))).every((s) => s === 200) ? true : undefined), 60_000);
}, 240_000);

/** Rows of a query on the shared store, through its HTTP interface. */
async function storeRows<T>(sql: string): Promise<T[]> {
  const response = await fetch(`${store}/?database=mds`, { method: 'POST', body: `${sql} FORMAT JSONEachRow` });
  if (!response.ok) throw new Error(`store: ${response.status} ${await response.text()}`);
  const text = (await response.text()).trim();
  return text === '' ? [] : text.split('\n').map((line) => JSON.parse(line) as T);
}

test('a killed aggregator loses nothing: its replacement stores every trade sent, once', async () => {
  const sent = new Set<string>();
  const stopRecording = simulator!.onTradeSent((t) => sent.add(`${t.venue}/${t.market}/${t.tradeId}`));
  await new Promise((r) => setTimeout(r, 2_000));
  const aggregator = started.find((p) => p.name === 'aggregate')!;
  const killed = new Promise((r) => aggregator.child.once('exit', r));
  aggregator.child.kill('SIGKILL');
  await killed;
  // Trades keep flowing into Kafka while no aggregator runs; the new one resumes from the committed
  // offsets once the group gives up on the killed member (its 6 s session timeout).
  await new Promise((r) => setTimeout(r, 3_000));
  await start('aggregate (restarted)', ['infra/roles/main.ts', 'aggregate'], env, /"msg":"health and metrics listening"/);
  await new Promise((r) => setTimeout(r, 3_000));
  stopRecording();
  expect(sent.size).toBeGreaterThan(50);

  const missing = await until(
    'every trade sent around the kill stored',
    async () => {
      const rows = await storeRows<{ id: string }>("SELECT concat(venue, '/', market, '/', trade_id) AS id FROM trades");
      const stored = new Set(rows.map((r) => r.id));
      const left = [...sent].filter((id) => !stored.has(id));
      return left.length === 0 ? left : undefined;
    },
    90_000,
  );
  expect(missing).toEqual([]);
  const duplicates = await storeRows<{ id: string; n: string }>(
    "SELECT concat(venue, '/', market, '/', trade_id) AS id, count() AS n FROM trades GROUP BY venue, market, trade_id HAVING n > 1",
  );
  expect(duplicates).toEqual([]);
}, 180_000);

test('a key revoked on the shared store is refused by both replicas within their 5 s refresh', async () => {
  const get = (api: string) => fetch(`${api}/v1/prices?ids=bitcoin`, { headers: { 'x-api-key': key } });
  for (const api of apis) expect((await get(api)).status).toBe(200);
  await runToEnd(['api/keysCli.ts', 'revoke', key.slice(0, keyPrefixLength)], env);
  const revokedAt = Date.now();
  const refusedAfter = await Promise.all(
    apis.map((api) => until(`${api} refusing the revoked key`, async () => ((await get(api)).status === 401 ? Date.now() - revokedAt : undefined), 15_000)),
  );
  // The refresh interval plus one poll of `until` and a request.
  for (const ms of refusedAfter) expect(ms).toBeLessThanOrEqual(6_500);
}, 60_000);
