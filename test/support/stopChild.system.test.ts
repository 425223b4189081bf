import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { afterEach, describe, expect, it } from 'vitest';
import { stopChild } from './stopChild.ts';

/** Every process a test started: killed after each test, so that a failing stopChild leaves none behind. */
const children: ChildProcess[] = [];
afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
});

/** A Node process running `script`, once it has printed its first line (its handlers are set). */
async function started(script: string): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['-e', `${script}; console.log('ready'); setInterval(() => {}, 1000);`], { stdio: ['ignore', 'pipe', 'inherit'] });
  children.push(child);
  await once(child.stdout!, 'data');
  return child;
}

describe('stopChild', () => {
  it('sends SIGTERM and resolves with the exit code the process chose', async () => {
    const child = await started(`process.once('SIGTERM', () => process.exit(3))`);
    expect(await stopChild(child)).toEqual({ code: 3, signal: null });
  });

  it('answers at once for a process that has already exited', async () => {
    const child = spawn(process.execPath, ['-e', 'process.exit(5)'], { stdio: 'ignore' });
    await once(child, 'exit');
    expect(await stopChild(child)).toEqual({ code: 5, signal: null });
  });

  it('kills a process that ignores SIGTERM after killAfterMs', async () => {
    const child = await started(`process.on('SIGTERM', () => {})`);
    const begun = performance.now();
    expect(await stopChild(child, { killAfterMs: 300 })).toEqual({ code: null, signal: 'SIGKILL' });
    expect(performance.now() - begun).toBeGreaterThanOrEqual(290);
  });
});
