import { constants, PerformanceObserver, type PerformanceEntry } from 'node:perf_hooks';
import { getHeapStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { RoleContext } from './context.ts';

/**
 * Full collections in a row after which a main thread still holding more than MAIN_HEAP_MB is
 * over it for good, not in a passing burst (a large answer being built, a batch being written).
 */
export const fullCollectionsOverBound = 3;

/** Counts, in a row, the full collections that left more than the bound in use. */
export class HeapBoundCheck {
  readonly boundBytes: number;
  #inARow = 0;

  constructor(boundBytes: number) {
    this.boundBytes = boundBytes;
  }

  /** After a full collection that left `usedBytes` in use: whether the bound is passed for good. */
  afterFullCollection(usedBytes: number): boolean {
    this.#inARow = usedBytes > this.boundBytes ? this.#inARow + 1 : 0;
    return this.#inARow >= fullCollectionsOverBound;
  }
}

/**
 * How often the heap in use is looked at between collections. V8 spaces full collections further
 * apart as a heap grows (a heap growing fast had its third at 1,224 MB under a 48 MB bound), so a
 * look that finds it over the bound asks for a full collection at once: the bound is then judged
 * within seconds of being passed, not hundreds of megabytes later.
 */
export const heapLookMs = 1_000;

/** V8's full collection, callable: `gc` exists only with --expose-gc, which a running isolate can still take for new contexts. */
function fullCollection(): () => void {
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as () => void;
}

// A 'gc' entry's detail says its kind (Node's perf_hooks).
const isFullCollection = (entry: PerformanceEntry) => ((entry as PerformanceEntry & { detail?: { kind?: number } }).detail)?.kind === constants.NODE_PERFORMANCE_GC_MAJOR;

/**
 * Lets every thread's heap grow at most `percent` past what a full collection left in use before
 * the next one (HEAP_GROWING_PERCENT; 0 leaves V8's own choice). V8 reads the flag at each
 * collection, so it binds the running main thread as well as the worker threads started after.
 */
export function limitHeapGrowth(percent: number): void {
  if (percent > 0) setFlagsFromString(`--heap-growing-percent=${percent}`);
}

/**
 * Bounds the main thread's heap (the store's client, the in-process bus, the sinks, the index
 * runner) by MAIN_HEAP_MB, as THREAD_HEAP_MB bounds the worker threads: once it holds more after
 * `fullCollectionsOverBound` full collections in a row, the process logs it and stops in order,
 * as for a worker out of its heap (its supervisor starts it again; the trades missed meanwhile
 * are recovered). A look each `heapLookMs` that finds it over the bound forces the next full
 * collection rather than waiting for V8's. Not V8's own limit: node's --max-old-space-size would
 * also override every worker's bound (V8 reads it for every isolate), and V8 at its limit aborts
 * without a stop.
 */
export function boundMainHeap({ config, log, life }: Pick<RoleContext, 'config' | 'log' | 'life'>): void {
  if (config.MAIN_HEAP_MB === 0) return;
  const check = new HeapBoundCheck(config.MAIN_HEAP_MB * 1_048_576);
  const collect = fullCollection();
  const look = setInterval(() => {
    if (getHeapStatistics().used_heap_size > check.boundBytes) collect();
  }, heapLookMs).unref();
  const observer = new PerformanceObserver((list) => {
    if (!list.getEntries().some(isFullCollection)) return;
    const usedBytes = getHeapStatistics().used_heap_size;
    if (!check.afterFullCollection(usedBytes)) return;
    observer.disconnect();
    clearInterval(look);
    log.fatal({ usedMb: Math.round(usedBytes / 1_048_576), mainHeapMb: config.MAIN_HEAP_MB }, `the main thread's heap stayed over MAIN_HEAP_MB=${config.MAIN_HEAP_MB} after ${fullCollectionsOverBound} full collections: stopping`);
    void life.shutdown('main thread heap over MAIN_HEAP_MB').then(() => process.exit(1));
  });
  observer.observe({ entryTypes: ['gc'] });
}
