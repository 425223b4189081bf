// The admin channel in-process, over a real Unix socket and a chDB store: its mode, its requests
// applied at once to the KeyStore it serves, stale and foreign sockets, and its removal on close.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, lstatSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTestStore, silentLog } from '../../test/support/harness.ts';
import { AdminChannelAbsentError, adminChannelClient, adminSocketPath, AdminSocketTakenError, serveAdminChannel } from '../adminChannel.ts';
import { KeyStore } from '../keys.ts';

let env: Awaited<ReturnType<typeof openTestStore>>;
let keys: KeyStore;
const dirs: string[] = [];
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'mds-admin-'));
  dirs.push(dir);
  return dir;
}

beforeAll(async () => {
  env = await openTestStore();
  keys = new KeyStore(env.store, { secret: 'a'.repeat(64), refreshMs: 60_000 });
  expect(await keys.start(silentLog)).toBe(true);
});
afterAll(async () => {
  keys.close();
  await env.dispose();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** One raw request line, the raw answer. */
async function rawRequest(path: string, line: string): Promise<unknown> {
  const socket = connect(path);
  await once(socket, 'connect');
  socket.end(line);
  let text = '';
  for await (const chunk of socket) text += String(chunk);
  return JSON.parse(text);
}

describe('the admin channel', () => {
  it('is a socket only its owner can use; create, list and revoke apply at once to the served KeyStore; close removes it', async () => {
    const dir = tempDir();
    const path = adminSocketPath(dir);
    const channel = await serveAdminChannel(path, keys, silentLog);
    try {
      expect(lstatSync(path).isSocket()).toBe(true);
      expect(statSync(path).mode & 0o777).toBe(0o600);
      expect(readdirSync(dir)).toEqual(['admin.sock']); // the private directory it was made in is gone

      const client = adminChannelClient(path);
      const { key, prefix } = await client.create('over the socket');
      expect(key).toMatch(/^mds_[0-9A-Za-z]{32}$/);
      expect(keys.verify(key)).toMatchObject({ prefix }); // no reload needed (refreshMs is a minute)
      expect((await client.list()).find((k) => k.prefix === prefix)).toMatchObject({ name: 'over the socket', revokedAt: null, legacy: false });
      expect(await client.revoke(prefix)).toBe(1);
      expect(keys.verify(key)).toBeUndefined();
      expect(await client.revoke(prefix)).toBe(0);
    } finally {
      await channel.close();
    }
    expect(existsSync(path)).toBe(false);
    await expect(adminChannelClient(path).list()).rejects.toBeInstanceOf(AdminChannelAbsentError);
  });

  it('answers a malformed request with an error and keeps serving', async () => {
    const path = adminSocketPath(tempDir());
    const channel = await serveAdminChannel(path, keys, silentLog);
    try {
      expect(await rawRequest(path, 'not json\n')).toMatchObject({ ok: false, error: expect.stringContaining('bad request') });
      expect(await rawRequest(path, '{"command":"create","name":""}\n')).toMatchObject({ ok: false });
      expect(await rawRequest(path, `${'x'.repeat(5000)}`)).toEqual({ ok: false, error: 'request too long' });
      expect(await rawRequest(path, '{"command":"list"}\n')).toMatchObject({ ok: true, keys: expect.any(Array) });
    } finally {
      await channel.close();
    }
  });

  it('replaces a stale socket left by a process that died', async () => {
    const dir = tempDir();
    const path = adminSocketPath(dir);
    // A process that listens on the path, then is killed: its socket file stays, nobody answers.
    const child = spawn(process.execPath, ['-e', `require('node:net').createServer().listen(${JSON.stringify(path)}, () => console.log('up'))`], { stdio: ['ignore', 'pipe', 'inherit'] });
    await once(child.stdout, 'data');
    child.kill('SIGKILL');
    await once(child, 'exit');
    expect(lstatSync(path).isSocket()).toBe(true);
    await expect(adminChannelClient(path).list()).rejects.toBeInstanceOf(AdminChannelAbsentError);

    const channel = await serveAdminChannel(path, keys, silentLog);
    try {
      expect(Array.isArray(await adminChannelClient(path).list())).toBe(true);
    } finally {
      await channel.close();
    }
  });

  it('refuses a path where a live channel answers, or that is not a socket, and leaves it as it was', async () => {
    const path = adminSocketPath(tempDir());
    const first = await serveAdminChannel(path, keys, silentLog);
    try {
      await expect(serveAdminChannel(path, keys, silentLog)).rejects.toBeInstanceOf(AdminSocketTakenError);
      expect(Array.isArray(await adminChannelClient(path).list())).toBe(true);
    } finally {
      await first.close();
    }
    writeFileSync(path, 'an operator file');
    await expect(serveAdminChannel(path, keys, silentLog)).rejects.toThrow(/is not a socket/);
    expect(lstatSync(path).isFile()).toBe(true);
  });
});
