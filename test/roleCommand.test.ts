import { readFileSync } from 'node:fs';
import { expect, test } from 'vitest';
import { mainTs, roleCommand } from './support/roleCommand.ts';

const scripts = (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { scripts: Record<string, string> }).scripts;

/** A role script as its parts: `NAME=value ... node --flag ... infra/roles/main.ts role`. */
function partsOf(script: string): { env: Record<string, string>; flags: string[]; script: string; role: string } {
  const words = script.split(' ');
  const node = words.indexOf('node');
  const env = Object.fromEntries(words.slice(0, node).map((w) => w.split('=') as [string, string]));
  const rest = words.slice(node + 1);
  const at = rest.findIndex((w) => w.endsWith('main.ts'));
  return { env, flags: rest.slice(0, at), script: rest[at]!, role: rest[at + 1]! };
}

test.each([['demo'], ['start'], ['api'], ['aggregate']])('roleCommand starts the role of `npm run %s` with its script\'s flags and environment', (name) => {
  const expected = partsOf(scripts[name]!);
  const { argv, env } = roleCommand(expected.role, ['--venues', 'okx'], { KEEP: 'me' }, ['--cpu-prof']);
  expect(argv.slice(0, expected.flags.length)).toEqual(expected.flags);
  expect(argv.slice(expected.flags.length)).toEqual(['--cpu-prof', mainTs, expected.role, '--venues', 'okx']);
  expect(mainTs.endsWith(expected.script)).toBe(true);
  expect(env).toEqual({ KEEP: 'me', ...expected.env });
});
