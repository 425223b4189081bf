import { readFileSync } from 'node:fs';

const packageJson = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { name: string; version: string };

/** `market-data-service 0.1.0`: what `--version` prints, from package.json. */
export const versionLine = `${packageJson.name} ${packageJson.version}`;

/**
 * `--help` (or `-h`) and `--version`, the same in every command: print the usage or the version on
 * stdout and exit 0, before anything is configured or started.
 */
export function answerHelpAndVersion(args: readonly string[], usage: string): void {
  if (args.includes('--help') || args.includes('-h')) {
    process.stdout.write(`${usage}\n`);
    process.exit(0);
  }
  if (args.includes('--version')) {
    process.stdout.write(`${versionLine}\n`);
    process.exit(0);
  }
}
