// A deployment ships without test/ and without simulator/ (the demo's SIMULATED world): `npm run
// api`, `ingest`, `aggregate` and `jobs` start from a copy of the repository without those two
// folders (node_modules linked), each until its ready line, and stop on SIGTERM with exit code 0.
// Each role also loads only what it runs (infra/roles/main.ts): the API and the store roles no
// collector nor ccxt, the collectors no store nor API; --help no role at all. test/layers.test.ts
// holds the rule on the imports; this file proves the roles start without what it keeps out.
import { spawn, type ChildProcess } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it, test } from 'vitest';
import { freeLoopbackPort } from '../../test/support/ports.ts';

const root = fileURLToPath(new URL('../../', import.meta.url));
const moduleLog = join(root, 'test/support/moduleLog.ts');
/** What a deployment lacks, and what is no file of the repository (.gitignore). */
const leftOut = new Set(['test', 'simulator', 'node_modules', '.git', 'data', '.tmp', 'coverage', 'reports']);

let tree = '';
let dataDir = '';
/** Where each process's module log is written. */
let logs = '';
let runs = 0;
/** Processes started and not yet exited: killed after the tests, whatever happened. */
const running = new Set<ChildProcess>();

/** The repository's files without test/ and simulator/, in a temporary directory, its node_modules a link to ours. */
function copyTree(): string {
  const dir = mkdtempSync(join(tmpdir(), 'mds-production-tree-'));
  cpSync(root, dir, {
    recursive: true,
    filter: (source) => {
      const top = relative(root, source).split(sep)[0]!;
      return !leftOut.has(top) && !top.startsWith('.stryker-tmp');
    },
  });
  symlinkSync(join(root, 'node_modules'), join(dir, 'node_modules'), 'dir');
  return dir;
}

/** `npm run <script>` in the tree, from its package.json: the variables it sets, and the arguments of node (run with this Node, the npm `node` package's). */
function npmScript(script: string): { env: Record<string, string>; args: string[] } {
  const scripts = (JSON.parse(readFileSync(join(tree, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;
  const words = scripts[script]!.split(' ');
  const env: Record<string, string> = {};
  for (let word = words[0]; word !== undefined && /^[A-Z_]+=/.test(word); word = words[0]) {
    const [name, value] = word.split('=') as [string, string];
    env[name] = value;
    words.shift();
  }
  const [command, ...args] = words;
  expect(command).toBe('node');
  return { env, args };
}

interface Exited {
  /** Everything it printed, stdout and stderr. */
  output: string;
  code: number | null;
  signal: NodeJS.Signals | null;
  /** Whether `ready` matched its output before it exited. */
  wasReady: boolean;
  /** Every module its main thread loaded, as paths in the tree or URLs of packages. */
  loaded: string[];
}

/**
 * Runs `node <args>` in the tree, without a terminal, until it exits; with `ready`, SIGTERM once
 * its output matches; killed after `timeoutMs`. The environment is ours without the store, bus and
 * redis a developer may have exported.
 */
async function runInTree(args: string[], env: Record<string, string>, { ready, timeoutMs = 20_000 }: { ready?: RegExp; timeoutMs?: number } = {}): Promise<Exited> {
  const logFile = join(logs, `run-${runs++}`);
  const base: NodeJS.ProcessEnv = { ...process.env, PORT: '0', LOG_LEVEL: 'info', MDS_TEST_MODULE_LOG: logFile };
  for (const name of ['CLICKHOUSE_URL', 'KAFKA_BROKERS', 'REDIS_URL', 'DEMO_API_KEY', 'MDS_DATA_DIR']) delete base[name];
  const child = spawn(process.execPath, ['--import', moduleLog, ...args], { cwd: tree, env: { ...base, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  running.add(child);
  let output = '';
  let wasReady = false;
  const onData = (chunk: Buffer) => {
    output += chunk.toString();
    if (ready && !wasReady && ready.test(output)) {
      wasReady = true;
      child.kill('SIGTERM');
    }
  };
  child.stdout.on('data', onData);
  child.stderr.on('data', onData);
  // A process that neither gets ready nor exits is killed, and fails its test.
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) => child.once('close', (c, s) => resolve([c, s])));
  clearTimeout(timer);
  running.delete(child);
  const treeUrl = pathToFileURL(tree).href;
  // No log from a process that was killed: what it printed says why.
  const urls = existsSync(logFile) ? readFileSync(logFile, 'utf8').split('\n') : [];
  const loaded = urls.map((url) => (url.startsWith(`${treeUrl}/`) ? url.slice(treeUrl.length + 1) : url));
  return { output, code, signal, wasReady, loaded };
}

/** What a role must not load: folders of the tree, and packages. */
const packageLoaded = (loaded: string[], name: string) => loaded.some((url) => url.includes(`/node_modules/${name}/`));
const folderLoaded = (loaded: string[], folder: string) => loaded.some((path) => path.startsWith(`${folder}/`));

beforeAll(async () => {
  logs = mkdtempSync(join(tmpdir(), 'mds-module-logs-'));
  tree = copyTree();
  dataDir = join(tree, 'data');
  const migrate = npmScript('migrate');
  const migrated = await runInTree(migrate.args, { ...migrate.env, MDS_DATA_DIR: dataDir }, { timeoutMs: 90_000 });
  expect(migrated.code, migrated.output).toBe(0);
  expect(migrated.output).toMatch(/"msg":"applied \d+ migrations"/);
});

afterAll(() => {
  for (const child of running) child.kill('SIGKILL');
  for (const dir of [tree, logs]) if (dir) rmSync(dir, { recursive: true, force: true });
});

test('the tree is the repository without test/ and simulator/', () => {
  const copied = (path: string) => existsSync(join(tree, path));
  expect({ roles: copied('infra/roles/main.ts'), simulator: copied('simulator'), test: copied('test') }).toEqual({ roles: true, simulator: false, test: false });
});

describe('each role starts without test/ and simulator/, gets ready, and exits 0 on SIGTERM', () => {
  const servesOps = /"msg":"health and metrics listening"/;
  // The roles that open the store run one at a time: chDB binds a data directory to one process.
  const roles: { role: string; ready: RegExp; loads: string; loadsNot: { folders: string[]; packages: string[] } }[] = [
    { role: 'api', ready: /"msg":"api listening"/, loads: 'api/server.ts', loadsNot: { folders: ['ingest', 'simulator'], packages: ['ccxt'] } },
    { role: 'aggregate', ready: servesOps, loads: 'aggregate/tradeSink.ts', loadsNot: { folders: ['ingest', 'api', 'simulator'], packages: ['ccxt'] } },
    { role: 'jobs', ready: servesOps, loads: 'infra/jobs.ts', loadsNot: { folders: ['ingest', 'api', 'simulator'], packages: ['ccxt'] } },
    { role: 'ingest', ready: servesOps, loads: 'ingest/collector.ts', loadsNot: { folders: ['api', 'aggregate', 'simulator'], packages: ['chdb'] } },
  ];
  it.each(roles)('npm run $role', async ({ role, ready, loads, loadsNot }) => {
    // The collectors' one venue is a loopback port nothing listens on: no internet here, and the role starts without its venues.
    const nowhere = `127.0.0.1:${await freeLoopbackPort()}`;
    const script = npmScript(role);
    const args = role === 'ingest' ? [...script.args, '--venues', 'binance'] : script.args;
    const run = await runInTree(args, { ...script.env, MDS_DATA_DIR: dataDir, VENUE_BINANCE_WS_URL: `ws://${nowhere}`, VENUE_BINANCE_REST_URL: `http://${nowhere}` }, { ready, timeoutMs: 90_000 });
    expect({ wasReady: run.wasReady, code: run.code, signal: run.signal }, run.output.slice(-3000)).toEqual({ wasReady: true, code: 0, signal: null });
    expect(run.loaded).toContain(loads);
    expect({ folders: loadsNot.folders.filter((f) => folderLoaded(run.loaded, f)), packages: loadsNot.packages.filter((p) => packageLoaded(run.loaded, p)) }).toEqual({ folders: [], packages: [] });
  }, 120_000);
});

test('--help and --version load no role: main.ts and cli.ts are all of ours they load', async () => {
  for (const option of ['--help', '--version']) {
    const api = npmScript('api');
    const run = await runInTree([...api.args, option], api.env);
    expect(run.code, run.output).toBe(0);
    expect(run.loaded.filter((path) => !path.includes(':'))).toEqual(['infra/roles/main.ts', 'infra/cli.ts']);
  }
});

test('a role that does not collect refuses --venues and --assets, without loading the venues to read them', async () => {
  for (const option of ['--venues', '--assets']) {
    const api = npmScript('api');
    const run = await runInTree([...api.args, option, 'bitcoin'], api.env);
    expect(run.code, run.output).toBe(2);
    expect(run.output).toContain(`${option} is an option of the roles that collect (ingest, all, demo), not of api`);
    expect(folderLoaded(run.loaded, 'ingest')).toBe(false);
  }
});
