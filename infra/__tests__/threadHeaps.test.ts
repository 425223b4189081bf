// mds_thread_heap_bytes when scrapes overlap (two Prometheus servers, or an operator's curl beside
// one): each answer names every thread observed. Its collection reads the workers' heaps
// asynchronously; a collection that cleared the gauge between another's writes and its read left
// threads out of that answer. The workers here stand in for worker threads (the unit project runs
// none): each answers its heap's figures after a few turns of the event loop, as a busy thread does.
import type { Worker } from 'node:worker_threads';
import { setImmediate as turn } from 'node:timers/promises';
import { expect, it } from 'vitest';
import { createMetrics, observeWorkerHeap } from '../metrics.ts';

function workerAnsweringAfter(turns: number): Worker {
  const heap = { used_heap_size: 1, total_heap_size: 2, heap_size_limit: 3, external_memory: 4, malloced_memory: 5 };
  const getHeapStatistics = async () => {
    for (let i = 0; i < turns; i++) await turn();
    return heap;
  };
  return { getHeapStatistics } as unknown as Worker;
}

it('names every thread in each of several scrapes at once', async () => {
  const metrics = createMetrics();
  observeWorkerHeap(metrics, 'alpha', workerAnsweringAfter(1));
  observeWorkerHeap(metrics, 'beta', workerAnsweringAfter(3));
  observeWorkerHeap(metrics, 'gamma', workerAnsweringAfter(2));
  const threadsIn = (text: string) => [...text.matchAll(/^mds_thread_heap_bytes\{thread="([^"]+)",kind="total"\} \d+$/gm)].map((m) => m[1]).sort();
  // Scrapes started a turn apart, so that each one's collection meets the others' at every step.
  const scrapeAfter = async (turns: number) => {
    for (let i = 0; i < turns; i++) await turn();
    return metrics.registry.metrics();
  };
  const scrapes = await Promise.all(Array.from({ length: 12 }, (_, i) => scrapeAfter(i)));
  for (const text of scrapes) expect(threadsIn(text)).toEqual(['alpha', 'beta', 'gamma', 'main']);
});
