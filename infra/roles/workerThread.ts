import { Worker, type MessagePort } from 'node:worker_threads';
import type { Lifecycle, StopStage } from './lifecycle.ts';
import type { RoleContext } from './context.ts';
import { observeWorkerHeap } from '../metrics.ts';
import { youngGenerationMb } from './youngGeneration.ts';

/** What every worker of a role tells its parent about its life, beside its own messages. */
export type WorkerLifeMessage = { type: 'started' } | { type: 'rejection'; message: string } | { type: 'stopped' };

/**
 * A part of a role in a worker thread (the collectors, the API): resolves once the worker says
 * 'started', and rejects if it fails before; its heap is bounded (its old generation by
 * THREAD_HEAP_MB or a bound of its own, its young generation by youngGenerationMb) and reported as
 * mds_thread_heap_bytes. Its stray rejections are counted and logged as this process's own; after
 * start, a worker that fails (out of its heap, too) or exits stops the process, as an uncaught
 * exception would. Its stop, registered in `ctx.life` at `stage`, asks it to stop and waits for
 * 'stopped': every message it posted before has been handled by then.
 */
export async function startWorkerThread<M extends { type: string }>(
  { config, log, life, metrics }: Pick<RoleContext, 'config' | 'log' | 'life' | 'metrics'>,
  name: string,
  stage: StopStage,
  url: URL,
  workerData: unknown,
  onMessage: (message: M, worker: Worker) => void,
  /** Its old generation's bound in MB, THREAD_HEAP_MB unless given; 0 = V8's default. */
  ownHeapMb?: number,
): Promise<Worker> {
  const heapMb = ownHeapMb ?? config.THREAD_HEAP_MB;
  // What the operator changes to give the thread more: the setting, or (a bound of its own) the code.
  const bound = ownHeapMb === undefined ? `THREAD_HEAP_MB=${heapMb}` : `its own bound, ${heapMb} MB`;
  const worker = new Worker(url, { workerData, resourceLimits: { maxYoungGenerationSizeMb: youngGenerationMb, ...(heapMb > 0 ? { maxOldGenerationSizeMb: heapMb } : {}) } });
  const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
  let running = false;
  let stopping = false;
  let onStopped = () => {};
  const started = new Promise<void>((resolve, reject) => {
    worker.on('message', (message: M | WorkerLifeMessage) => {
      switch (message.type) {
        case 'started':
          running = true;
          return resolve();
        case 'rejection':
          // Counted and logged by this process's own handler (main.ts), as any stray rejection.
          process.emit('unhandledRejection', new Error(`in the ${name} worker: ${(message as { message: string }).message}`), Promise.resolve());
          return;
        case 'stopped':
          return onStopped();
        default:
          onMessage(message as M, worker);
      }
    });
    const fail = (err: Error) => {
      if (!running) return reject(err);
      if (stopping) return;
      stopping = true;
      if ((err as NodeJS.ErrnoException).code === 'ERR_WORKER_OUT_OF_MEMORY') log.fatal({ err, heapLimitMb: heapMb }, `${name} worker ran out of its heap (${bound}): stopping`);
      else log.fatal({ err }, `${name} worker failed: stopping`);
      void life.shutdown(`${name} worker failure`).then(() => process.exit(1));
    };
    worker.once('error', fail);
    worker.once('exit', (code) => fail(new Error(`${name} worker exited with code ${code}`)));
  });
  life.add(`${name}-worker`, stage, async () => {
    stopping = true;
    const stopped = new Promise<void>((resolve) => (onStopped = resolve));
    worker.postMessage({ type: 'stop' });
    await Promise.race([stopped, exited]);
    await worker.terminate();
  });
  await started;
  observeWorkerHeap(metrics, name, worker);
  return worker;
}

/**
 * The worker's side: stray rejections go to the parent, and a 'stop' from it stops `life`, then
 * runs `after` (what must follow the parts' stops), says 'stopped' and closes the port.
 */
export function answerParent(port: MessagePort, life: Lifecycle, after: () => Promise<void> = async () => {}): void {
  const post = (message: WorkerLifeMessage) => port.postMessage(message);
  process.on('unhandledRejection', (reason) => post({ type: 'rejection', message: reason instanceof Error ? (reason.stack ?? reason.message) : String(reason) }));
  port.on('message', (message: { type: string }) => {
    if (message.type !== 'stop') return;
    void life.shutdown('stop').then(async () => {
      await after();
      post({ type: 'stopped' });
      port.close();
    });
  });
}
