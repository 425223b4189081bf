// The service as an operator meets it, as separate processes: --help and --version, a role started
// on a schema that is behind, and no password nor demo key in anything the processes print.
// Processes are started detached (a session of their own): no terminal, as under a service manager.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { ccxtVenues, nativeVenues } from '../../ingest/venues/registry.ts';
import { simulatedTickers } from '../../simulator/market.ts';
import { mainTs } from '../../test/support/roleCommand.ts';

const root = fileURLToPath(new URL('../../', import.meta.url));
const packageJson = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { name: string; version: string };
const password = 'Hunter2-Secret-Pw';

const dirs: string[] = [];
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'mds-ops-test-'));
  dirs.push(dir);
  return dir;
}
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

interface Run {
  stdout: string;
  stderr: string;
  code: number | null;
}

/** Environment of a child: ours without the store, bus and redis settings a developer may have exported. */
function childEnv(env: Record<string, string>): NodeJS.ProcessEnv {
  const base: NodeJS.ProcessEnv = { ...process.env, PORT: '0', LOG_LEVEL: 'info' };
  for (const name of ['CLICKHOUSE_URL', 'KAFKA_BROKERS', 'REDIS_URL', 'DEMO_API_KEY', 'MDS_DATA_DIR']) delete base[name];
  return { ...base, ...env };
}

/**
 * Runs `node <args>` until it exits, or until `until` matches its stdout (then SIGTERM, and waits for
 * the exit); whatever it printed either way.
 */
function run(args: string[], env: Record<string, string>, options: { until?: RegExp; onMatch?: (stdout: string) => Promise<void>; timeoutMs?: number } = {}): Promise<Run> {
  const child = spawn(process.execPath, args, { cwd: root, env: childEnv(env), detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  const out = { stdout: '', stderr: '' };
  let matched = false;
  child.stdout.on('data', (chunk: Buffer) => {
    out.stdout += chunk.toString();
    if (options.until && !matched && options.until.test(out.stdout)) {
      matched = true;
      void (options.onMatch ?? (async () => {}))(out.stdout).finally(() => child.kill('SIGTERM'));
    }
  });
  child.stderr.on('data', (chunk: Buffer) => (out.stderr += chunk.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 60_000);
  return new Promise((resolve) => {
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ ...out, code });
    });
  });
}

/** Keys that occur twice in one object of a JSON line (JSON.parse keeps the last silently; some shippers reject the line). */
function duplicateKeys(line: string): string[] {
  const seen: Set<string>[] = [];
  const duplicates: string[] = [];
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (c === '{') seen.push(new Set());
    else if (c === '}') seen.pop();
    else if (c === '"') {
      let end = i + 1;
      while (line[end] !== '"') end += line[end] === '\\' ? 2 : 1;
      const isKey = line[end + 1] === ':' && /[{,]/.test(line[i - 1] ?? '');
      const keys = seen.at(-1);
      if (isKey && keys) {
        const key = line.slice(i + 1, end);
        if (keys.has(key)) duplicates.push(key);
        keys.add(key);
      }
      i = end;
    }
  }
  return duplicates;
}

describe('--help and --version', () => {
  const commands: [string, string[]][] = [
    ...['all', 'demo', 'migrate', 'ingest', 'aggregate', 'api', 'jobs'].map((role): [string, string[]] => [`main.ts ${role}`, [mainTs, role]]),
    ['main.ts', [mainTs]],
    ['keysCli.ts', [join(root, 'api/keysCli.ts')]],
    ['soak.ts', [join(root, 'test/soak.ts')]],
  ];
  it.each(commands)('%s prints its usage and its version and exits 0', async (_name, command) => {
    const help = await run([...command, '--help'], {});
    expect(help).toMatchObject({ code: 0, stderr: '' });
    expect(help.stdout).toMatch(/^usage: /);
    expect(help.stdout).toContain('--version');
    const version = await run([...command, '--version'], {});
    expect(version).toEqual({ code: 0, stderr: '', stdout: `${packageJson.name} ${packageJson.version}\n` });
  });
});

describe('ingest --list-venues', () => {
  it('prints one row per venue, native and ccxt, and exits 0', async () => {
    const { code, stdout, stderr } = await run([mainTs, 'ingest', '--list-venues'], {});
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    const rows = stdout.trim().split('\n').slice(1);
    expect(rows).toHaveLength(nativeVenues.length + ccxtVenues.length);
    expect(rows.filter((r) => /\snative\s/.test(r))).toHaveLength(nativeVenues.length);
    expect(rows.filter((r) => /\sccxt \(/.test(r))).toHaveLength(ccxtVenues.length);
  });
});

describe('safe upgrades', () => {
  it.each(['api', 'aggregate', 'jobs'])('the %s role refuses to start on a store that is not migrated, and says to run npm run migrate', async (role) => {
    const dir = tempDir();
    const { code, stdout, stderr } = await run([mainTs, role], { MDS_DATA_DIR: dir });
    expect(code).toBe(1);
    expect(stdout + stderr).toContain('run `npm run migrate` first');
    expect(stdout + stderr).not.toContain('listening');
  });

  it('npm run migrate migrates, after which the api role starts', async () => {
    const dir = tempDir();
    const migrated = await run([mainTs, 'migrate'], { MDS_DATA_DIR: dir });
    expect(migrated.code).toBe(0);
    expect(migrated.stdout).toMatch(/"msg":"applied \d+ migrations"/);
    const again = await run([mainTs, 'migrate'], { MDS_DATA_DIR: dir });
    expect(again.stdout).toContain('schema up to date: nothing to migrate');
    const api = await run([mainTs, 'api'], { MDS_DATA_DIR: dir }, { until: /"msg":"api listening"/ });
    expect(api.stdout).toContain('"msg":"api listening"');
  });
});

describe('no secret in what the service prints', () => {
  it('a mistyped URL, a short token or key: the error names them without their secrets', async () => {
    const { code, stdout, stderr } = await run([mainTs, 'api'], {
      CLICKHOUSE_URL: `http//admin:${password}@clickhouse:8123`,
      REDIS_URL: `redis://:${password}@`,
      METRICS_TOKEN: 'Hunter2short',
      DEMO_API_KEY: 'Hunter2short',
    });
    expect(code).toBe(2);
    for (const name of ['CLICKHOUSE_URL', 'REDIS_URL', 'METRICS_TOKEN', 'DEMO_API_KEY']) expect(stderr).toContain(name);
    expect(stderr).toContain('clickhouse:8123');
    expect(stdout + stderr).not.toContain('Hunter2');
  });

  it('a ClickHouse server that cannot be reached, a Redis that cannot be reached: no password in any line', async () => {
    const unreachable = await run([mainTs, 'api'], { CLICKHOUSE_URL: `http://admin:${password}@127.0.0.1:9`, API_KEY_SECRET: `${password}-and-more-to-make-32-chars` });
    expect(unreachable.code).toBe(1);
    expect(unreachable.stdout).toContain('failed to start');
    expect(unreachable.stdout + unreachable.stderr).not.toContain(password);

    const dir = tempDir();
    expect((await run([mainTs, 'migrate'], { MDS_DATA_DIR: dir })).code).toBe(0);
    const redis = await run([mainTs, 'api'], { MDS_DATA_DIR: dir, REDIS_URL: `redis://:${password}@127.0.0.1:9` }, { until: /unreachable/ });
    expect(redis.stdout).toContain('Redis');
    expect(redis.stdout + redis.stderr).not.toContain(password);
  });

  it('the demo with no terminal: its key and SQL password are in the data directory, the key works, neither is on a log line; no line repeats a key', async () => {
    const dir = tempDir();
    let key = '';
    let status = 0;
    let heapLimits = '';
    // A first start imports its SIMULATED days first: two of them here, not the default 45 (about 45 s
    // alone, twice that beside the suite), through the same steps and log lines.
    const demo = await run([mainTs, 'demo'], { MDS_DATA_DIR: dir, DEMO_HISTORY_DAYS: '2' }, {
      until: /"msg":"api listening"/,
      timeoutMs: 240_000,
      onMatch: async (stdout) => {
        key = readFileSync(join(dir, 'demo-api-key'), 'utf8').trim();
        const url = /"url":"([^"]+)","msg":"api listening"/.exec(stdout)?.[1];
        status = (await fetch(`${url}/v1/global`, { headers: { 'x-api-key': key } })).status;
        heapLimits = (await (await fetch(`${url}/metrics`)).text()).split('\n').filter((l) => l.startsWith('mds_thread_heap_bytes') && l.includes('kind="limit"')).join('\n');
      },
    });
    expect(key).toMatch(/^mds_[0-9A-Za-z]{32}$/);
    expect(status).not.toBe(401);
    // The service's threads within THREAD_HEAP_MB (512 MB, plus V8's young generation); the demo's
    // simulator, which is not the service, within its own 1,024 MB.
    const limitMb = (thread: string) => Number(new RegExp(`thread="${thread}",kind="limit"\\} (\\S+)`).exec(heapLimits)?.[1]) / 1_048_576;
    expect(limitMb('ingest')).toBeGreaterThanOrEqual(512);
    expect(limitMb('ingest')).toBeLessThanOrEqual(768);
    expect(limitMb('api')).toBeLessThanOrEqual(768);
    expect(limitMb('simulator')).toBeGreaterThanOrEqual(1_024);
    expect(limitMb('simulator')).toBeLessThanOrEqual(1_024 + 256);
    expect(demo.stdout).toContain(join(dir, 'demo-api-key'));
    expect(demo.stdout + demo.stderr).not.toContain(key);
    expect(demo.stdout + demo.stderr).not.toContain(key.slice('mds_'.length));
    // The SQL reader's password (generated, kept beside the key) is on no line either.
    const sqlPassword = readFileSync(join(dir, 'sql-password'), 'utf8').trim();
    expect(sqlPassword.length).toBeGreaterThan(15);
    expect(demo.stdout + demo.stderr).not.toContain(sqlPassword);
    const lines = demo.stdout.split('\n').filter((l) => l.startsWith('{'));
    expect(lines.length).toBeGreaterThan(10);
    expect(lines.flatMap((l) => duplicateKeys(l).map((k) => `${k} in ${l}`))).toEqual([]);
    // The history was the two days asked for: a trade every 15 minutes on at most two markets (Binance's
    // and Gate's) of each simulated ticker.
    const written = lines.map((l) => JSON.parse(l) as { msg: string; trades?: number }).find((l) => l.msg === "SIMULATED demo history written as the venues' archive files");
    expect(written?.trades).toBeGreaterThan(0);
    expect(written?.trades).toBeLessThanOrEqual(2 * 96 * 2 * simulatedTickers.length);
  }, 270_000);
});
