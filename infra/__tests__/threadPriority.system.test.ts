// The collectors' thread runs at a lower priority than the rest of its process, and its parent
// gives it the process's own back to stop it (infra/roles/threadPriority.ts): each Linux thread has
// a nice value of its own, which any thread of the process can set.
import { getPriority } from 'node:os';
import { Worker } from 'node:worker_threads';
import { expect, test } from 'vitest';
import { restoreThreadPriority } from '../roles/threadPriority.ts';

const module = JSON.stringify(new URL('../roles/threadPriority.ts', import.meta.url).href);

/** A worker thread that lowers its own priority when asked, and answers with the result and its thread id. */
const lowering = `
import { parentPort } from 'node:worker_threads';
import { currentThreadId, lowerThreadPriority } from ${module};
parentPort.on('message', () => parentPort.postMessage({ threadId: currentThreadId(), result: lowerThreadPriority(10) }));
`;

test("a thread lowered to nice 10 gets the process's priority back from another thread, the process's own never moving", async () => {
  const worker = new Worker(new URL(`data:text/javascript,${encodeURIComponent(lowering)}`));
  try {
    const processNice = getPriority(process.pid);
    const lowered = await new Promise<{ threadId: number; result: number | undefined }>((resolve, reject) => {
      worker.once('message', resolve);
      worker.once('error', reject);
      worker.postMessage('lower');
    });
    expect(lowered.threadId).not.toBe(process.pid);
    expect(lowered.result).toBe(Math.max(processNice, 10));
    expect(getPriority(lowered.threadId)).toBe(Math.max(processNice, 10));
    expect(getPriority(process.pid)).toBe(processNice);
    const restored = restoreThreadPriority(lowered.threadId);
    // Lowering a nice value needs the privilege CI runs with (root); elsewhere the thread stays where it was.
    if (process.getuid?.() === 0) {
      expect(restored).toBe(processNice);
      expect(getPriority(lowered.threadId)).toBe(processNice);
    } else {
      expect(restored).toBeUndefined();
      expect(getPriority(lowered.threadId)).toBe(Math.max(processNice, 10));
    }
  } finally {
    await worker.terminate();
  }
});
