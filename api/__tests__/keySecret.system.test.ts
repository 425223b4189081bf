import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../../infra/config.ts';
import { loadApiKeySecret } from '../keySecret.ts';
import { runModuleScript } from '../../test/support/moduleScript.ts';

const dirs: string[] = [];
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'mds-key-secret-'));
  dirs.push(dir);
  return dir;
}
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

const embedded = (dir: string) => ({ MDS_DATA_DIR: dir, CLICKHOUSE_URL: undefined, API_KEY_SECRET: undefined });

describe('the API key secret', () => {
  it('API_KEY_SECRET wins when set', () => {
    const secret = 'x'.repeat(40);
    expect(loadApiKeySecret({ ...embedded(tempDir()), API_KEY_SECRET: secret })).toBe(secret);
  });

  it('with CLICKHOUSE_URL and no API_KEY_SECRET: a ConfigError that says what to set, and no file', () => {
    const dir = tempDir();
    const load = () => loadApiKeySecret({ MDS_DATA_DIR: dir, CLICKHOUSE_URL: 'http://u:p@clickhouse:8123', API_KEY_SECRET: undefined });
    expect(load).toThrow(ConfigError);
    expect(load).toThrow(/API_KEY_SECRET is required with CLICKHOUSE_URL.*every API replica/);
    expect(readdirSync(dir)).toEqual([]);
  });

  it('embedded: generated once into <MDS_DATA_DIR>/api-key-secret, owner-only, and reused', () => {
    const dir = join(tempDir(), 'not-yet');
    const first = loadApiKeySecret(embedded(dir));
    expect(first).toMatch(/^[0-9a-f]{64}$/);
    const file = join(dir, 'api-key-secret');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    // The data directory it made is the owner's alone too (it was 0755).
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(readFileSync(file, 'utf8').trim()).toBe(first);
    expect(loadApiKeySecret(embedded(dir))).toBe(first);
    expect(readdirSync(dir)).toEqual(['api-key-secret']); // no temporary file left
  });

  it('processes starting together on a fresh directory all get the one secret', async () => {
    const dir = tempDir();
    const module = fileURLToPath(new URL('../keySecret.ts', import.meta.url));
    // Each child loads the module, then waits for the same instant: their calls overlap.
    const at = Date.now() + 2_000;
    const script = `const { loadApiKeySecret } = await import(${JSON.stringify(module)}); while (Date.now() < ${at}); process.stdout.write(loadApiKeySecret({ MDS_DATA_DIR: ${JSON.stringify(dir)} }));`;
    const secrets = await Promise.all(
      Array.from({ length: 4 }, async () => (await runModuleScript(script)).out),
    );
    expect(secrets[0]).toMatch(/^[0-9a-f]{64}$/);
    expect(new Set(secrets)).toEqual(new Set([secrets[0]]));
    expect(readFileSync(join(dir, 'api-key-secret'), 'utf8').trim()).toBe(secrets[0]);
  });

  it('a file with a short secret is refused without showing it', () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'api-key-secret'), 'tooShortSecret\n');
    expect(() => loadApiKeySecret(embedded(dir))).toThrow(ConfigError);
    expect(() => loadApiKeySecret(embedded(dir))).toThrow(/14 characters/);
    expect(() => loadApiKeySecret(embedded(dir))).not.toThrow(/tooShortSecret/);
  });
});
