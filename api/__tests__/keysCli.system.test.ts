import { spawnSync } from 'node:child_process';
import { createHash, createHmac } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { openStore } from '../../infra/store.ts';
import { KeyStore } from '../keys.ts';
import { silentLog } from '../../test/support/harness.ts';
import { mainTs } from '../../test/support/roleCommand.ts';

const cli = fileURLToPath(new URL('../keysCli.ts', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'mds-keys-cli-'));
const password = 'Hunter2-Secret-Pw';

/** Runs `node <file> ...args` as npm does, with the embedded store in `dir` unless `extra` says otherwise. */
function node(file: string, args: string[], extra: Record<string, string> = {}) {
  const env: NodeJS.ProcessEnv = { ...process.env, MDS_DATA_DIR: dir, LOG_LEVEL: 'silent', ...extra };
  for (const name of ['CLICKHOUSE_URL', 'API_KEY_SECRET']) if (!(name in extra)) delete env[name];
  const run = spawnSync(process.execPath, [file, ...args], { env, encoding: 'utf8', timeout: 60_000 });
  return { code: run.status, stdout: run.stdout, stderr: run.stderr };
}
/** `npm run keys -- ...args` */
const keys = (...args: string[]) => node(cli, args);

// The CLI opens the data dir in its own processes; this process opens it only at the end, once they are done.
describe('npm run keys', () => {
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it.each([
    [[]],
    [['create']],
    [['create', '--name', '']],
    [['create', '--name', 'a', 'extra']],
    [['list', 'extra']],
    [['list', '--name', 'x']],
    [['revoke']],
    [['revoke', 'a', 'b']],
    [['delete', 'x']],
    [['create', '--bogus']],
  ])('exits 2 with the usage for %j', (args) => {
    const run = keys(...args);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('usage: npm run keys -- <command>');
    expect(run.stdout).toBe('');
  });

  it('refuses a store that is not migrated, saying to migrate, and does not migrate it', () => {
    const refused = keys('list');
    expect(refused.code).toBe(1);
    expect(refused.stderr.trim()).toMatch(/^the store's schema is behind .*run `npm run migrate` first$/);
    expect(keys('list').stderr).toContain('npm run migrate'); // still behind: the CLI applied nothing
  });

  it('with CLICKHOUSE_URL: needs API_KEY_SECRET, and prints an unexpected error without the password', () => {
    const url = `http://admin:${password}@127.0.0.1:9`;
    const noSecret = node(cli, ['list'], { CLICKHOUSE_URL: url });
    expect(noSecret.code).toBe(2);
    expect(noSecret.stderr).toContain('API_KEY_SECRET is required with CLICKHOUSE_URL');
    const secret = `${password}-and-enough-for-32-characters`;
    const unreachable = node(cli, ['list'], { CLICKHOUSE_URL: url, API_KEY_SECRET: secret });
    expect(unreachable.code).toBe(1);
    expect(unreachable.stderr).toContain('127.0.0.1:9');
    expect(unreachable.stdout + unreachable.stderr).not.toContain('Hunter2');
  });

  it('creates, lists and revokes keys, storing only their keyed hash', async () => {
    expect(node(mainTs, ['migrate']).code).toBe(0);
    const created = keys('create', '--name', 'ci bot');
    expect(created.code).toBe(0);
    const key = created.stdout.trim();
    expect(key).toMatch(/^mds_[A-Za-z0-9]{32}$/);
    const prefix = key.slice(0, 8);
    expect(created.stderr).toContain(prefix);

    const other = keys('create', '--name', 'other');
    expect(other.code).toBe(0);
    const otherKey = other.stdout.trim();

    const listed = keys('list');
    expect(listed.code).toBe(0);
    const lines = listed.stdout.trim().split('\n');
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(new RegExp(`^${prefix}\\t"ci bot"\\t\\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z\\tactive$`));
    expect(listed.stdout).not.toContain(key);

    const revoked = keys('revoke', prefix);
    expect(revoked.code).toBe(0);
    expect(revoked.stdout).toContain(`revoked 1 key(s) with prefix ${prefix}`);
    expect(keys('list').stdout).toMatch(new RegExp(`^${prefix}\\t"ci bot"\\t\\S+\\trevoked \\d{4}-`, 'm'));

    const again = keys('revoke', prefix);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain(`no active key with prefix ${prefix}`);

    // This process holds the store from here: the CLI, finding no admin channel, says so in one line.
    const store = await openStore({ MDS_DATA_DIR: dir, CLICKHOUSE_DATABASE: 'mds', CLICKHOUSE_URL: undefined });
    try {
      const locked = keys('list');
      expect(locked.code).toBe(1);
      expect(locked.stderr.trim().split('\n')).toHaveLength(1);
      expect(locked.stderr).toMatch(/in use by process \d+ and no admin channel answers at .*admin\.sock.*retry, or stop it first/);
      expect(locked.stderr).not.toContain('DB::Exception');

      const secret = readFileSync(join(dir, 'api-key-secret'), 'utf8').trim();
      const rows = await store.rows<{ key_hash: string }>('SELECT key_hash FROM api_keys');
      expect(rows.map((r) => r.key_hash)).toContain(createHmac('sha256', secret).update(key).digest('hex'));
      expect(rows.map((r) => r.key_hash)).not.toContain(createHash('sha256').update(key).digest('hex'));
      expect(JSON.stringify(await store.rows('SELECT * FROM api_keys'))).not.toContain(key.slice(8));
      const verifier = new KeyStore(store, { secret });
      expect(await verifier.start(silentLog)).toBe(true);
      verifier.close();
      expect(verifier.verify(key)).toBeUndefined();
      expect(verifier.verify(otherKey)).toMatchObject({ prefix: otherKey.slice(0, 8) });
    } finally {
      await store.close();
    }
  });
});
