// What the test projects of vitest.config.ts refuse, so that a file cannot sit in a project whose
// promise it breaks: each refusal fails the test at once, naming the project the file belongs in.
import childProcess from 'node:child_process';
import { syncBuiltinESMExports } from 'node:module';
import net from 'node:net';
import workerThreads from 'node:worker_threads';

export type Project = 'unit' | 'store' | 'system';

export class WrongTestProject extends Error {
  override name = 'WrongTestProject';
  constructor(what: string, from: Project, to: Project) {
    super(`${what} in a ${from} test: name the file *.${to}.test.ts (vitest project '${to}', vitest.config.ts)`);
  }
}

export const refusal = (what: string, from: Project, to: Project) => (): never => {
  throw new WrongTestProject(what, from, to);
};

/** Child processes and worker threads fail in this test process. */
export function refuseProcesses(from: Project): void {
  for (const name of ['spawn', 'fork', 'exec', 'execFile', 'spawnSync', 'execSync', 'execFileSync'] as const) {
    (childProcess as unknown as Record<string, unknown>)[name] = refusal(`a child process (${name})`, from, 'system');
  }
  (workerThreads as unknown as { Worker: unknown }).Worker = refusal('a worker thread', from, 'system');
  // Named imports of node:child_process and node:worker_threads see the replacements too.
  syncBuiltinESMExports();
}

/** Listening and connecting sockets fail in this test process. */
export function refuseSockets(from: Project): void {
  net.Server.prototype.listen = refusal('a listening socket', from, 'system') as never;
  net.Socket.prototype.connect = refusal('a socket connection', from, 'system') as never;
}
