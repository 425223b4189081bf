import { fileURLToPath } from 'node:url';
import { mallocEnv } from '../../infra/roles/mallocThreshold.ts';
import { mainThreadNodeFlag } from '../../infra/roles/youngGeneration.ts';

/** The service's entry point (package.json's role scripts run it). */
export const mainTs = fileURLToPath(new URL('../../infra/roles/main.ts', import.meta.url));

/**
 * Node's arguments and the environment that start `role` as package.json's scripts do (`npm start`,
 * `npm run demo`, ...): malloc's threshold and the main thread's young generation. The benches and
 * the soak start the service with it, so that they measure it as operators run it. `nodeOptions`
 * (a profiler's flags) go before the script; `env` is the child's environment besides these.
 */
export function roleCommand(role: string, args: readonly string[], env: NodeJS.ProcessEnv, nodeOptions: readonly string[] = []): { argv: string[]; env: NodeJS.ProcessEnv } {
  return { argv: [mainThreadNodeFlag, ...nodeOptions, mainTs, role, ...args], env: { ...env, ...mallocEnv } };
}
