// Keys while the embedded service runs, as an operator does it: `node infra/roles/main.ts all` holds
// the chDB store in its own process, and `npm run keys` creates, lists and revokes through its admin
// channel; the revoked key is refused within 5 s. Then the error paths that carry a password (an
// unreachable Redis, an unreachable ClickHouse server): no log line of any process holds a key,
// the key secret or a password.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { until, untilValue } from './support/until.ts';
import { mainTs } from './support/roleCommand.ts';

const root = fileURLToPath(new URL('../', import.meta.url));
const keysCli = join(root, 'api/keysCli.ts');
const password = 'Hunter2-Secret-Pw';
const dir = mkdtempSync(join(tmpdir(), 'mds-keys-live-'));
/** Everything every process printed, checked at the end. */
const printed: string[] = [];
const children: ChildProcess[] = [];

afterAll(async () => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

/** Ours without what a developer may have exported; the service's logs at info with the access lines. */
function childEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, PORT: '0', MDS_DATA_DIR: dir, LOG_LEVEL: 'info', ACCESS_LOG_LEVEL: 'info' };
  for (const name of ['CLICKHOUSE_URL', 'KAFKA_BROKERS', 'REDIS_URL', 'DEMO_API_KEY', 'API_KEY_SECRET']) delete env[name];
  return { ...env, ...extra };
}

/** A role in its own process, once its API listens; its output goes to `printed`. */
async function startRole(args: string[], env: NodeJS.ProcessEnv): Promise<{ child: ChildProcess; url: string; output: () => string }> {
  const child = spawn(process.execPath, [mainTs, ...args], { cwd: root, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let output = '';
  child.stdout!.on('data', (c: Buffer) => (output += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (output += c.toString()));
  await until(
    () => {
      if (child.exitCode !== null) throw new Error(`${args.join(' ')} exited before it started:\n${output}`);
      return /"msg":"admin channel listening/.test(output);
    },
    `${args.join(' ')} to start`,
    { timeoutMs: 90_000, everyMs: 100, context: () => output },
  );
  const url = /"url":"([^"]+)","msg":"api listening"/.exec(output)![1]!;
  return { child, url, output: () => output };
}

async function stopRole(role: { child: ChildProcess; output: () => string }): Promise<void> {
  role.child.kill('SIGTERM');
  if (role.child.exitCode === null) await once(role.child, 'exit');
  printed.push(role.output());
}

/** `npm run keys -- ...args`; its stderr is kept (stdout is where `create` prints the key, by design). */
function keys(args: string[], env: NodeJS.ProcessEnv) {
  const run = spawnSync(process.execPath, [keysCli, ...args], { cwd: root, env, encoding: 'utf8', timeout: 60_000 });
  printed.push(run.stderr);
  if (args[0] !== 'create') printed.push(run.stdout);
  return { code: run.status, stdout: run.stdout, stderr: run.stderr };
}

const statusOf = async (url: string, key: string) => (await fetch(`${url}/v1/global`, { headers: { 'x-api-key': key } })).status;

const madeKeys: string[] = [];

describe('npm run keys while the embedded service runs', () => {
  it('creates a key the running API accepts at once, lists it, and revokes it: refused within 5 s', async () => {
    // One native venue, pointed at a closed port: the collectors run, and fail, without the internet.
    const env = childEnv({ VENUE_BINANCE_WS_URL: 'ws://127.0.0.1:9', VENUE_BINANCE_REST_URL: 'http://127.0.0.1:9' });
    const service = await startRole(['all', '--venues', 'binance'], env);
    try {
      const created = keys(['create', '--name', 'while running'], env);
      expect(created.code).toBe(0);
      const key = created.stdout.trim();
      madeKeys.push(key);
      expect(key).toMatch(/^mds_[0-9A-Za-z]{32}$/);
      expect(await statusOf(service.url, key)).not.toBe(401);

      const listed = keys(['list'], env);
      expect(listed.code).toBe(0);
      expect(listed.stdout).toMatch(new RegExp(`^${key.slice(0, 8)}\\t"while running"\\t\\S+\\tactive$`, 'm'));

      const revoked = keys(['revoke', key.slice(0, 8)], env);
      expect(revoked).toMatchObject({ code: 0, stdout: `revoked 1 key(s) with prefix ${key.slice(0, 8)}\n` });
      const status = await untilValue(async () => ((await statusOf(service.url, key)) === 401 ? 401 : undefined), 'the revoked key refused', 5_000);
      expect(status).toBe(401);
    } finally {
      await stopRole(service);
    }
    expect(existsSync(join(dir, 'admin.sock'))).toBe(false);
    // Stopped: the CLI opens the store itself and finds the key revoked.
    expect(keys(['list'], env).stdout).toMatch(/\trevoked \d{4}-/);
  }, 180_000);

  it('an unreachable Redis or ClickHouse server with a password in its URL: no password, secret or key in any line', async () => {
    const secret = `${password}-key-secret-of-40-characters`;
    // The api role on the same store, with a Redis that cannot be reached: the quota answers 503.
    const env = childEnv({ REDIS_URL: `redis://:${password}@127.0.0.1:9`, API_KEY_SECRET: secret });
    const api = await startRole(['api'], env);
    try {
      const created = keys(['create', '--name', 'redis down'], env);
      expect(created.code).toBe(0);
      const key = created.stdout.trim();
      madeKeys.push(key);
      expect(await statusOf(api.url, key)).toBe(503);
      expect(await statusOf(api.url, `${key}x`)).toBe(401);
    } finally {
      await stopRole(api);
    }
    expect(printed.at(-1)).toContain('Redis');

    const clickhouse = { CLICKHOUSE_URL: `http://admin:${password}@127.0.0.1:9`, API_KEY_SECRET: secret };
    const serverRole = spawnSync(process.execPath, [mainTs, 'api'], { cwd: root, env: childEnv(clickhouse), encoding: 'utf8', timeout: 60_000 });
    expect(serverRole.status).toBe(1);
    expect(serverRole.stdout).toContain('failed to start');
    printed.push(serverRole.stdout, serverRole.stderr);
    expect(keys(['list'], childEnv(clickhouse)).code).toBe(1);

    const fileSecret = readFileSync(join(dir, 'api-key-secret'), 'utf8').trim();
    const everything = printed.join('\n');
    expect(everything.length).toBeGreaterThan(2000);
    expect(madeKeys).toHaveLength(2);
    for (const key of madeKeys) expect(everything).not.toContain(key.slice(8));
    expect(everything).not.toContain(fileSecret);
    expect(everything).not.toContain('Hunter2');
  }, 180_000);
});
