import { spawn } from 'node:child_process';
import { once } from 'node:events';

/**
 * Runs `script` as an ES module in a child Node process (`node --input-type=module -e`), for what
 * must happen in a process of its own (an exit, a crash, several processes at once). Resolves once
 * the child has exited and its stdout is closed, with its exit code and stdout; a child still
 * running after `killAfterMs` is killed.
 */
export async function runModuleScript(script: string, killAfterMs = 50_000): Promise<{ code: number | null; out: string }> {
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  const killer = setTimeout(() => child.kill('SIGKILL'), killAfterMs);
  const [code] = (await once(child, 'close')) as [number | null];
  clearTimeout(killer);
  return { code, out };
}
