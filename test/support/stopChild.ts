// The one way tests and benches stop a process they started: SIGTERM, then wait for its exit.
// Listening for 'exit' after the process has already exited would wait for good, so a process
// that is gone is answered at once.

import type { ChildProcess } from 'node:child_process';

export interface StopChildOptions {
  /** After this long (ms) without an exit, SIGKILL; unset, wait as long as it takes. */
  killAfterMs?: number;
}

/** How a stopped process ended: its exit code, or the signal that ended it. */
export interface ChildEnd {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** Sends SIGTERM to `child` (unless it has exited) and resolves once it has exited. */
export async function stopChild(child: ChildProcess, options: StopChildOptions = {}): Promise<ChildEnd> {
  if (child.exitCode !== null || child.signalCode !== null) return { code: child.exitCode, signal: child.signalCode };
  const exited = new Promise<ChildEnd>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  child.kill('SIGTERM');
  if (options.killAfterMs === undefined) return exited;
  const killer = setTimeout(() => child.kill('SIGKILL'), options.killAfterMs);
  try {
    return await exited;
  } finally {
    clearTimeout(killer);
  }
}
