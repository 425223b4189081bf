// The main thread's young generation and malloc's threshold can only be given at the process's
// start: the role scripts that run the service carry both (infra/roles/youngGeneration.ts,
// mallocThreshold.ts), as the market bench and the soak that start it do.
import { readFileSync } from 'node:fs';
import { expect, test } from 'vitest';
import { mallocEnv } from '../roles/mallocThreshold.ts';
import { mainThreadNodeFlag } from '../roles/youngGeneration.ts';

const scripts = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { scripts: Record<string, string> }).scripts;

const envPrefix = Object.entries(mallocEnv).map(([name, value]) => `${name}=${value}`).join(' ');

test("every npm script that runs the service gives the main thread the workers' young generation and malloc its threshold", () => {
  for (const role of ['start', 'demo', 'ingest', 'aggregate', 'api', 'jobs']) {
    expect(scripts[role], role).toBe(`${envPrefix} node ${mainThreadNodeFlag} infra/roles/main.ts ${role === 'start' ? 'all' : role}`);
  }
});
