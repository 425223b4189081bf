// The demo's generated key (infra/roles/demo.ts provisionDemoKey) across starts on one data
// directory, against a real chDB store: it is kept in `<MDS_DATA_DIR>/demo-api-key`, owner-only,
// and reused, so restarts never leave more than one valid generated demo key; a kept key that was
// revoked, or a lost file, gives a new key in place of the old. The key is shown on the terminal
// (stderr, made a TTY here) and is on no log line.
import { randomBytes } from 'node:crypto';
import { readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { KeyStore } from '../../api/keys.ts';
import { openTestStore, silentLog, testConfig } from '../../test/support/harness.ts';
import { demoKeyFileName, provisionDemoKey } from '../roles/demo.ts';

const secret = randomBytes(32).toString('hex');
let env: Awaited<ReturnType<typeof openTestStore>>;
let keyFile: string;
/** What the demo wrote to the terminal, and to its log stream. */
let shown: string[];
let logged: string[];
const stderrIsTTY = Object.getOwnPropertyDescriptor(process.stderr, 'isTTY');

beforeAll(async () => {
  env = await openTestStore();
  keyFile = join(env.dir, demoKeyFileName);
});
afterAll(() => env.dispose());

beforeEach(() => {
  shown = [];
  logged = [];
  Object.defineProperty(process.stderr, 'isTTY', { value: true, configurable: true });
  vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => (shown.push(String(chunk)), true));
});
afterEach(() => {
  vi.restoreAllMocks();
  if (stderrIsTTY) Object.defineProperty(process.stderr, 'isTTY', stderrIsTTY);
  else Reflect.deleteProperty(process.stderr, 'isTTY');
});

/** One demo start's key provisioning on the test's data directory; returns the key shown on the terminal. */
async function start(extra: Record<string, string> = {}): Promise<string> {
  const log = pino({ level: 'debug' }, new Writable({ write: (chunk, _enc, done) => (logged.push(String(chunk)), done()) }));
  const before = shown.length;
  await provisionDemoKey({ config: testConfig({ MDS_DATA_DIR: env.dir, ...extra }), log }, env.store, secret);
  const key = /Demo API key: (\S+)/.exec(shown.slice(before).join(''))?.[1];
  if (key === undefined) throw new Error(`no key shown: ${shown.join('')}`);
  return key;
}

/** Valid rows of api_keys, by name: counted in the store, not through the code under test. */
async function validKeys(): Promise<Record<string, number>> {
  const rows = await env.store.rows<{ name: string; n: number }>('SELECT name, toUInt32(count()) AS n FROM api_keys FINAL WHERE revoked_at IS NULL GROUP BY name ORDER BY name');
  return Object.fromEntries(rows.map((r) => [r.name, r.n]));
}

async function isValid(key: string): Promise<boolean> {
  const keys = new KeyStore(env.store, { secret });
  await keys.start(silentLog);
  keys.close();
  return keys.verify(key) !== undefined;
}

const keptKey = () => readFileSync(keyFile, 'utf8').trim();

describe('the generated demo key across starts on one data directory', () => {
  let first: string;

  it('two starts: one valid demo key, the same shown both times, kept in a file only its owner can read, on no log line', async () => {
    first = await start();
    const second = await start();
    expect(first).toMatch(/^mds_[0-9A-Za-z]{32}$/);
    expect(second).toBe(first);
    expect(await validKeys()).toEqual({ 'demo (generated)': 1 });
    expect(await isValid(first)).toBe(true);
    expect(keptKey()).toBe(first);
    expect(statSync(keyFile).mode & 0o777).toBe(0o600);
    expect(logged.join('')).not.toContain(first.slice('mds_'.length));
  });

  it('a kept key revoked since: a new key is kept in its place, the only valid one', async () => {
    expect(await new KeyStore(env.store, { secret }).revoke(first.slice(0, 8))).toBe(1);
    const next = await start();
    expect(next).not.toBe(first);
    expect(keptKey()).toBe(next);
    expect(statSync(keyFile).mode & 0o777).toBe(0o600);
    expect(await validKeys()).toEqual({ 'demo (generated)': 1 });
    expect([await isValid(first), await isValid(next)]).toEqual([false, true]);
    first = next;
  });

  it('the file lost while its key is valid: that key is revoked, a new one kept', async () => {
    rmSync(keyFile);
    const next = await start();
    expect(next).not.toBe(first);
    expect(keptKey()).toBe(next);
    expect(await validKeys()).toEqual({ 'demo (generated)': 1 });
    expect([await isValid(first), await isValid(next)]).toEqual([false, true]);
    first = next;
  });

  it('DEMO_API_KEY set: that key is shown and provisioned, neither kept in the file nor taking the generated one away', async () => {
    const chosen = `mds_${randomBytes(16).toString('hex')}`;
    expect([await start({ DEMO_API_KEY: chosen }), await start({ DEMO_API_KEY: chosen })]).toEqual([chosen, chosen]);
    expect(keptKey()).toBe(first);
    expect(await validKeys()).toEqual({ demo: 1, 'demo (generated)': 1 });
    expect(logged.join('')).not.toContain(chosen.slice('mds_'.length));
  });
});
