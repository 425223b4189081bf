// Global setup of the `store` and `system` projects (vitest.config.ts): one embedded store
// migrated once per run, in a child process (chDB binds one data directory per process, and vitest's
// own process must not hold one). Each test file's openTestStore (harness.ts) copies it instead of
// applying every migration again: about 0.3 s a file against 1-2 s. Vitest runs the projects' setups
// one after another in its own process: the first makes the template, the others find it.
//   node test/support/storeTemplate.ts <dir>   migrates a fresh store in <dir>
import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

/** The environment variable that names the template's directory for the test files. */
export const storeTemplateVariable = 'MDS_TEST_STORE_TEMPLATE';

/** Copies the run's migrated template into `dir`; false when no setup made one (the caller then migrates). */
export function copyStoreTemplate(dir: string): boolean {
  const template = process.env[storeTemplateVariable];
  if (template) cpSync(template, dir, { recursive: true });
  return template !== undefined;
}

export default function setup(): () => void {
  if (process.env[storeTemplateVariable]) return () => {};
  const dir = mkdtempSync(join(tmpdir(), 'mds-store-template-'));
  execFileSync(process.execPath, [fileURLToPath(import.meta.url), dir], { stdio: 'inherit' });
  process.env[storeTemplateVariable] = dir;
  return () => rmSync(dir, { recursive: true, force: true });
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const [dir] = process.argv.slice(2);
  if (!dir) {
    console.error('usage: node test/support/storeTemplate.ts <dir>');
    process.exit(2);
  }
  const { openStore } = await import('../../infra/store.ts');
  const { migrate } = await import('../../infra/migrate.ts');
  const store = await openStore({ MDS_DATA_DIR: dir, CLICKHOUSE_DATABASE: 'mds', CLICKHOUSE_URL: undefined });
  await migrate(store);
  await store.close();
}
