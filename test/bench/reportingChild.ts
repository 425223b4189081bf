// A bench's helper process that says where it is ready by one JSON line on its stdout (the API
// bench's servers, the universe bench's simulator, the market bench's bare server).
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';

/** Starts `node argv...` and resolves with it and its first stdout line, parsed; rejects if it exits first. */
export function spawnReporting<T>(argv: readonly string[], what: string, stdin: 'ignore' | 'pipe' = 'ignore'): Promise<{ child: ChildProcess; report: T }> {
  const child = spawn(process.execPath, argv, { stdio: [stdin, 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`${what} exited (${code}) before it was ready`)));
    createInterface({ input: child.stdout! }).once('line', (line) => resolve({ child, report: JSON.parse(line) as T }));
  });
}
