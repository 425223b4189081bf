import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { migrate } from '../../infra/migrate.ts';
import { openStore } from '../../infra/store.ts';
import { KeyStore } from '../keys.ts';
import { silentLog } from '../../test/support/harness.ts';

const cli = fileURLToPath(new URL('../keysCli.ts', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'mds-keys-cli-'));

/** Runs `npm run keys -- ...args` the way npm does: the CLI file under this Node, in its own process. */
function keys(...args: string[]) {
  const env: NodeJS.ProcessEnv = { ...process.env, MDS_DATA_DIR: dir, LOG_LEVEL: 'silent' };
  delete env.CLICKHOUSE_URL;
  const run = spawnSync(process.execPath, [cli, ...args], { env, encoding: 'utf8', timeout: 60_000 });
  return { code: run.status, stdout: run.stdout, stderr: run.stderr };
}

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

  it('creates, lists and revokes keys, storing only their hash', async () => {
    const created = keys('create', '--name', 'ci bot');
    expect(created.code).toBe(0);
    const key = created.stdout.trim();
    expect(key).toMatch(/^mds_[A-Za-z0-9]{32}$/);
    const prefix = key.slice(0, 12);
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

    const store = await openStore({ MDS_DATA_DIR: dir, CLICKHOUSE_DATABASE: 'mds', CLICKHOUSE_URL: undefined });
    try {
      await migrate(store);
      const rows = await store.rows<{ key_hash: string }>('SELECT key_hash FROM api_keys');
      expect(rows.map((r) => r.key_hash)).toContain(createHash('sha256').update(key).digest('hex'));
      expect(JSON.stringify(await store.rows('SELECT * FROM api_keys'))).not.toContain(key.slice(12));
      const verifier = new KeyStore(store);
      expect(await verifier.start(silentLog)).toBe(true);
      verifier.close();
      expect(verifier.verify(key)).toBeUndefined();
      expect(verifier.verify(otherKey)).toMatchObject({ prefix: otherKey.slice(0, 12) });
    } finally {
      await store.close();
    }
  });
});
