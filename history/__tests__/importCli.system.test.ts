// `npm run import` as a user runs it: against a running node holding the embedded store (through its
// store channel), downloading from a venue's site (a local HTTP server serving recorded files with
// their .CHECKSUM, right and wrong), and its errors; then against a ClickHouse server (the
// ClickHouse-HTTP front over chDB, as the split deployment tests use).
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createClient } from '@clickhouse/client';
import { zipSync } from 'fflate';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { storeChannelClient, storeSocketPath } from '../../infra/storeChannel.ts';
import { startClickHouseFront } from '../../test/support/clickhouseFront.ts';
import { until } from '../../test/support/until.ts';

const cli = fileURLToPath(new URL('../importCli.ts', import.meta.url));
const mainTs = fileURLToPath(new URL('../../infra/roles/main.ts', import.meta.url));
const fixture = (path: string) => fileURLToPath(new URL(`../archives/__tests__/fixtures/${path}`, import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'mds-import-cli-'));
const dataDir = join(dir, 'data');

/** `node <file> ...args` with the embedded store in dataDir, awaited (the test's HTTP server must keep serving). */
function node(file: string, args: string[], extra: Record<string, string> = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const env: NodeJS.ProcessEnv = { ...process.env, MDS_DATA_DIR: dataDir, LOG_LEVEL: 'silent', ...extra };
  if (!('CLICKHOUSE_URL' in extra)) delete env.CLICKHOUSE_URL;
  const child = spawn(process.execPath, [file, ...args], { env });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
}
const importCli = (args: string[], extra: Record<string, string> = {}) => node(cli, args, extra);

/** The archive site: the recorded 2025-01-01 trades as Binance publishes them (a zip and its CHECKSUM), and 2024-12-31 with a wrong CHECKSUM. */
function archiveSite(): Server {
  const day = (d: string) => `/data/spot/daily/trades/BTCUSDT/BTCUSDT-trades-${d}.zip`;
  const zipOf = (csv: string, name: string) => Buffer.from(zipSync({ [name]: readFileSync(fixture(csv)) }));
  const good = zipOf('binance/BTCUSDT-trades-2025-01-01.first210.csv', 'BTCUSDT-trades-2025-01-01.csv');
  const bad = zipOf('binance/BTCUSDT-trades-2024-12-31.first217.csv', 'BTCUSDT-trades-2024-12-31.csv');
  const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
  const files = new Map<string, Buffer | string>([
    [day('2025-01-01'), good],
    [`${day('2025-01-01')}.CHECKSUM`, `${sha(good)}  BTCUSDT-trades-2025-01-01.zip`],
    [day('2024-12-31'), bad],
    [`${day('2024-12-31')}.CHECKSUM`, `${sha(good)}  BTCUSDT-trades-2024-12-31.zip`],
  ]);
  return createServer((req, res) => {
    const body = files.get(req.url ?? '');
    res.writeHead(body === undefined ? 404 : 200).end(body);
  }).listen(0, '127.0.0.1');
}

let nodeProcess: ChildProcess | undefined;
let site: Server;
let siteUrl = '';
beforeAll(async () => {
  site = archiveSite();
  await new Promise((r) => site.once('listening', r));
  siteUrl = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
});
afterAll(async () => {
  if (nodeProcess && nodeProcess.exitCode === null) {
    const exited = once(nodeProcess, 'exit');
    nodeProcess.kill('SIGTERM');
    await exited;
  }
  site.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('against a running node on the embedded store, through its store channel', () => {
  const count = async (where = "venue = 'binance'") => (await storeChannelClient(storeSocketPath(dataDir)).rows<{ n: number }>(`SELECT count() AS n FROM trades WHERE ${where}`))[0]!.n;

  beforeAll(async () => {
    expect(spawnSync(process.execPath, [mainTs, 'migrate'], { env: { ...process.env, MDS_DATA_DIR: dataDir, LOG_LEVEL: 'silent' } }).status).toBe(0);
    nodeProcess = spawn(process.execPath, [mainTs, 'api'], { env: { ...process.env, MDS_DATA_DIR: dataDir, LOG_LEVEL: 'silent', PORT: '0' }, stdio: 'ignore' });
    await until(async () => (await count().catch(() => -1)) === 0, 'the node to serve its store channel', 60_000);
  });

  test('a file imported through the node, then skipped on a second run; the node holds the trades', async () => {
    const first = await importCli(['--venue', 'binance', fixture('binance/BTCUSDT-trades-2024-12-31.first217.csv')]);
    expect(first.code).toBe(0);
    expect(first.stdout).toContain(`import into the node holding ${dataDir}`);
    expect(first.stdout).toContain('rows read 217: new 217, already held 0, refused 0');
    expect(first.stdout).toMatch(/index history computed for 2024-12-31T00:00:00\.000Z/);
    expect(await count()).toBe(217);
    const again = await importCli(['--venue', 'binance', fixture('binance/BTCUSDT-trades-2024-12-31.first217.csv')]);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain('1 already imported');
    expect(await count()).toBe(217);
  });

  test('downloaded from the venue\'s site: the checksum verified; a file whose checksum does not match is refused, the others imported', async () => {
    const archives = join(dir, 'archives');
    const run = await importCli(['--venue', 'binance', '--market', 'BTCUSDT', '--from', '2024-12-31', '--to', '2025-01-01', '--dir', archives], { VENUE_BINANCE_ARCHIVE_URL: siteUrl });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('downloaded BTCUSDT-trades-2025-01-01.zip (sha256 verified)');
    expect(run.stdout).toMatch(/FAILED download .*BTCUSDT-trades-2024-12-31\.zip: .*sha256 [0-9a-f]{64} but its \.CHECKSUM says/);
    expect(run.stdout).toContain('rows read 210: new 210');
    expect(await count()).toBe(217 + 210);
    // The same day from the zip again (now kept in --dir): nothing new.
    const again = await importCli(['--venue', 'binance', '--market', 'BTCUSDT', '--from', '2025-01-01', '--to', '2025-01-01', '--dir', archives, '--force'], { VENUE_BINANCE_ARCHIVE_URL: siteUrl });
    expect(again.code).toBe(0);
    expect(again.stderr).toContain('have BTCUSDT-trades-2025-01-01.zip (sha256 verified)');
    expect(again.stdout).toContain('rows read 210: new 0, already held 210');
    expect(await count()).toBe(217 + 210);
  });

  test('errors: usage (exit 2), a refused kind naming the one to use, a missing file, a day not published', async () => {
    const usage = await importCli(['--venue', 'binance']);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain('usage: npm run import');
    const venue = await importCli(['--venue', 'kraken', 'x.csv']);
    expect(venue.code).toBe(2);
    expect(venue.stderr).toContain('unknown venue "kraken"');
    const kind = await importCli(['--venue', 'binance-futures', '--kind', 'trades', '--market', 'BTCUSDT', '--from', '2024-01-01', '--to', '2024-01-01']);
    expect(kind.code).toBe(1);
    expect(kind.stderr).toContain('import `aggTrades`');
    const missing = await importCli(['--venue', 'binance', join(dir, 'BTCUSDT-trades-2024-01-01.zip')]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('no such file');
    const unpublished = await importCli(['--venue', 'binance', '--market', 'BTCUSDT', '--from', '2024-01-01', '--to', '2024-01-01', '--dir', join(dir, 'archives')], { VENUE_BINANCE_ARCHIVE_URL: siteUrl });
    expect(unpublished.code).toBe(1);
    expect(unpublished.stdout).toContain('not published (HTTP 404)');
  });
});

test('--help documents the command; an unreachable ClickHouse server is said so', async () => {
  const help = await importCli(['--help']);
  expect(help.code).toBe(0);
  expect(help.stdout).toContain('binance-futures  aggTrades, trades (refused)');
  expect(help.stdout).toContain('trades newer than 2 hours ago');
  const unreachable = await importCli(['--venue', 'binance', fixture('binance/BTCUSDT-trades-2025-01-01.first210.csv')], { CLICKHOUSE_URL: 'http://127.0.0.1:9' });
  expect(unreachable.code).toBe(1);
  expect(unreachable.stderr).toContain('the store is unreachable (CLICKHOUSE_URL)');
});

test('against a ClickHouse server (CLICKHOUSE_URL): the chunks go as the request body, imported once', async () => {
  const front = await startClickHouseFront(join(dir, 'server'));
  try {
    const server = { CLICKHOUSE_URL: front.url, API_KEY_SECRET: 'a-secret-of-at-least-32-characters-here' };
    expect((await node(mainTs, ['migrate'], server)).code).toBe(0);
    const files = [fixture('binance-futures/BTCUSDT-aggTrades-2026-09-17.1428utc.first150.csv')];
    const first = await importCli(['--venue', 'binance-futures', ...files], server);
    expect(first.stderr).not.toMatch(/error/i);
    expect(first.code).toBe(0);
    expect(first.stdout).toContain('rows read 150: new 150');
    const forced = await importCli(['--venue', 'binance-futures', '--force', ...files], server);
    expect(forced.stdout).toContain('rows read 150: new 0, already held 150');
    const client = createClient({ url: front.url, database: 'mds' });
    const result = await client.query({ query: "SELECT count() AS n, min(trade_id) AS first FROM trades WHERE venue = 'binance-futures'", format: 'JSONEachRow' });
    expect(await result.json()).toEqual([{ n: 150, first: '3454067270' }]);
    await client.close();
  } finally {
    await front.close();
  }
});
