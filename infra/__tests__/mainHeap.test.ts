// The main thread's heap bound (MAIN_HEAP_MB): when it counts as passed, and the main thread's heap
// in mds_thread_heap_bytes. The stop itself is proven in a process of its own
// (infra/__tests__/threadHeapLimit.system.test.ts).
import { getHeapStatistics } from 'node:v8';
import { describe, expect, it } from 'vitest';
import { createMetrics } from '../metrics.ts';
import { fullCollectionsOverBound, HeapBoundCheck } from '../roles/mainHeap.ts';

const MB = 1_048_576;

describe('HeapBoundCheck', () => {
  it('is passed once the heap in use is over the bound after three full collections in a row', () => {
    expect(fullCollectionsOverBound).toBe(3);
    const check = new HeapBoundCheck(100 * MB);
    expect([check.afterFullCollection(101 * MB), check.afterFullCollection(150 * MB), check.afterFullCollection(100 * MB + 1)]).toEqual([false, false, true]);
  });

  it('starts counting again after a collection that left the heap within the bound (a burst)', () => {
    const check = new HeapBoundCheck(100 * MB);
    const afterEach = [101, 120, 100, 130, 140, 99, 101, 102, 103].map((mb) => check.afterFullCollection(mb * MB));
    expect(afterEach).toEqual([false, false, false, false, false, false, false, false, true]);
  });
});

it("mds_thread_heap_bytes reports the main thread, its limit V8's own, without any worker observed", async () => {
  const metrics = createMetrics();
  const mainThread = async () => {
    const values = (await metrics.registry.getSingleMetric('mds_thread_heap_bytes')!.get()).values.filter((v) => v.labels.thread === 'main');
    return (kind: string) => values.find((v) => v.labels.kind === kind)?.value;
  };
  const of = await mainThread();
  expect(of('limit')).toBe(getHeapStatistics().heap_size_limit);
  expect(of('used')).toBeGreaterThan(0);
  expect(of('total')).toBeGreaterThanOrEqual(of('used')!);
  expect(of('malloced')).toBeGreaterThan(0);

  // A buffer lives outside the heap: 64 MB held shows in `external`, not in `total`.
  const held = Buffer.alloc(64 * MB, 1);
  const withBuffer = await mainThread();
  expect(withBuffer('external')! - of('external')!).toBeGreaterThanOrEqual(64 * MB);
  expect(withBuffer('total')! - of('total')!).toBeLessThan(16 * MB);
  expect(held[held.length - 1]).toBe(1);
});
