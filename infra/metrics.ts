import { getHeapStatistics } from 'node:v8';
import type { Worker } from 'node:worker_threads';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { topics } from './events.ts';
import type { Bus } from './bus/bus.ts';
import type { Store } from './store.ts';

/**
 * The process's Prometheus registry (prom-client): process and event-loop metrics, plus what each
 * part registers. Our own metrics are named `mds_*`; counters that a part already keeps (a
 * collector's messages, the bus's drops) are read from it at scrape time, not counted twice.
 */
export interface Metrics {
  readonly registry: Registry;
}

export function createMetrics(): Metrics {
  const registry = new Registry();
  // Memory, CPU, GC, handles, and the event-loop delay histogram (nodejs_eventloop_lag_*).
  collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: 20 });
  const metrics = { registry };
  registerThreadHeaps(metrics);
  return metrics;
}

type Labels<L extends string> = Record<L, string>;

interface SampledOptions<L extends string> {
  name: string;
  help: string;
  labelNames: readonly L[];
  /** Read at every scrape: one value per label set. */
  read(): Iterable<{ labels: Labels<L>; value: number }>;
}

/**
 * A metric whose value is kept elsewhere (a collector's counters, the bus) and read at each scrape:
 * a counter for totals that only grow, a gauge for the rest.
 */
function sampled<L extends string>(kind: 'counter' | 'gauge', metrics: Metrics, o: SampledOptions<L>): void {
  const common = { name: o.name, help: o.help, labelNames: o.labelNames, registers: [metrics.registry] };
  if (kind === 'counter') {
    new Counter<L>({ ...common, collect() { this.reset(); for (const { labels, value } of o.read()) this.inc(labels, value); } });
  } else {
    new Gauge<L>({ ...common, collect() { this.reset(); for (const { labels, value } of o.read()) this.set(labels, value); } });
  }
}

export const sampledCounter = <L extends string>(metrics: Metrics, o: SampledOptions<L>) => sampled('counter', metrics, o);
export const sampledGauge = <L extends string>(metrics: Metrics, o: SampledOptions<L>) => sampled('gauge', metrics, o);

/** The worker threads whose heaps each registry reports (mds_thread_heap_bytes), by thread name. */
const workersOf = new WeakMap<Metrics, Map<string, Worker>>();

type HeapStatistics = Pick<ReturnType<typeof getHeapStatistics>, 'used_heap_size' | 'total_heap_size' | 'heap_size_limit' | 'external_memory' | 'malloced_memory'>;

/**
 * mds_thread_heap_bytes: the JavaScript heap of each thread, the main one (`thread="main"`, whose
 * bound MAIN_HEAP_MB is watched by infra/roles/mainHeap.ts, its limit V8's default) and each worker
 * observed below (a V8 isolate of its own, not in the nodejs_heap_* metrics, and part of the
 * process's RSS). Read at each scrape. Besides the heap, each thread's memory outside it that V8
 * knows of: `external` (buffers and other memory its objects hold, which the heap total leaves out)
 * and `malloced` (V8's own working memory, such as the compiler's), so that a rising RSS can be
 * put to a thread.
 */
function registerThreadHeaps(metrics: Metrics): void {
  const observed = new Map<string, Worker>();
  workersOf.set(metrics, observed);
  new Gauge({
    name: 'mds_thread_heap_bytes',
    help: 'JavaScript heap of each thread: used bytes, the total the isolate holds, and V8\'s limit (workers: THREAD_HEAP_MB or their own bound, plus the young generation; main: V8\'s default, its bound MAIN_HEAP_MB being watched by the process); outside the heap, external (buffers its objects hold) and malloced (V8\'s own working memory).',
    labelNames: ['thread', 'kind'],
    registers: [metrics.registry],
    async collect() {
      const heaps: [string, HeapStatistics][] = [['main', getHeapStatistics()]];
      for (const [name, worker] of observed) {
        // A stopped worker is left out.
        const heap = await worker.getHeapStatistics().catch(() => undefined);
        if (heap) heaps.push([name, heap]);
      }
      // Cleared and written with no wait between: a scrape that overlaps this one reads all of
      // this one's threads or all of its own, never a mix that leaves some out.
      this.reset();
      for (const [thread, heap] of heaps) {
        this.set({ thread, kind: 'used' }, heap.used_heap_size);
        this.set({ thread, kind: 'total' }, heap.total_heap_size);
        this.set({ thread, kind: 'limit' }, heap.heap_size_limit);
        this.set({ thread, kind: 'external' }, heap.external_memory);
        this.set({ thread, kind: 'malloced' }, heap.malloced_memory);
      }
    },
  });
}

/** Reports the heap of a worker thread in mds_thread_heap_bytes, under `thread`. */
export function observeWorkerHeap(metrics: Metrics, thread: string, worker: Worker): void {
  workersOf.get(metrics)?.set(thread, worker);
}

/** Held records and bytes, taken, conflated and refused events per topic, and the lag of every group. */
export function observeBus(metrics: Metrics, bus: Bus): void {
  const perTopic = (field: 'published' | 'dropped' | 'conflated' | 'heldRecords' | 'heldBytes') => () => {
    const stats = bus.stats();
    return topics.map((topic) => ({ labels: { topic }, value: stats.topics[topic][field] }));
  };
  sampledCounter(metrics, { name: 'mds_bus_published_total', help: 'Events the bus took, per topic.', labelNames: ['topic'], read: perTopic('published') });
  sampledCounter(metrics, { name: 'mds_bus_dropped_total', help: 'Events refused at the bus bound and lost, per topic. Alert on any increase.', labelNames: ['topic'], read: perTopic('dropped') });
  sampledCounter(metrics, { name: 'mds_bus_conflated_total', help: 'Book events that replaced an older unread book of the same market.', labelNames: ['topic'], read: perTopic('conflated') });
  sampledGauge(metrics, { name: 'mds_bus_held_records', help: 'Records the bus holds (in-process: not committed by every reader; Kafka: not yet sent).', labelNames: ['topic'], read: perTopic('heldRecords') });
  sampledGauge(metrics, { name: 'mds_bus_held_bytes', help: 'Estimated heap bytes of the held records.', labelNames: ['topic'], read: perTopic('heldBytes') });
  sampledCounter(metrics, { name: 'mds_bus_invalid_total', help: 'Events refused because they failed their schema.', labelNames: [], read: () => [{ labels: {}, value: bus.stats().invalid }] });
  sampledGauge(metrics, {
    name: 'mds_bus_lag_records',
    help: 'Records published and not yet committed by a consumer group, per topic.',
    labelNames: ['group', 'topic'],
    read: () => bus.stats().lags.map((l) => ({ labels: { group: l.group, topic: l.topic }, value: l.records })),
  });
}

/** What every insert into a table costs and when the last one landed; query time and failures. */
export interface StoreActivity {
  /** unix ms of the last successful insert per table. */
  lastInsertAt(table: string): number | undefined;
}

/**
 * Wraps a store so that every insert and query is measured: rows inserted, insert seconds, last
 * insert time, failures and calls in flight per table (the sinks' and the index runner's writes),
 * query seconds, failures and calls in flight. The wrapped store behaves exactly as the original.
 */
export function observeStore(metrics: Metrics, store: Store): { store: Store; activity: StoreActivity } {
  const registers = [metrics.registry];
  const rows = new Counter({ name: 'mds_store_inserted_rows_total', help: 'Rows inserted, per table.', labelNames: ['table'], registers });
  const insertSeconds = new Histogram({ name: 'mds_store_insert_seconds', help: 'Time of one insert, per table.', labelNames: ['table'], buckets: [0.005, 0.02, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30], registers });
  const insertFailures = new Counter({ name: 'mds_store_insert_failures_total', help: 'Inserts that failed, per table. Alert on a sustained increase.', labelNames: ['table'], registers });
  const querySeconds = new Histogram({ name: 'mds_store_query_seconds', help: 'Time of one query.', buckets: [0.001, 0.005, 0.02, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10], registers });
  const queryFailures = new Counter({ name: 'mds_store_query_failures_total', help: 'Queries that failed.', registers });
  // A hung store shows here first: calls that go out and do not come back (until their deadline).
  const insertsInFlight = new Gauge({ name: 'mds_store_inserts_in_flight', help: 'Inserts sent and not answered yet, per table.', labelNames: ['table'], registers });
  const queriesInFlight = new Gauge({ name: 'mds_store_queries_in_flight', help: 'Queries sent and not answered yet.', registers });
  const lastInsert = new Map<string, number>();
  sampledGauge(metrics, {
    name: 'mds_store_last_insert_timestamp_seconds',
    help: 'Unix time of the last successful insert, per table.',
    labelNames: ['table'],
    read: () => [...lastInsert].map(([table, at]) => ({ labels: { table }, value: at / 1000 })),
  });
  const observed: Store = {
    ...store,
    client: store.client,
    description: store.description,
    async insert(table, values, dedupToken) {
      const end = insertSeconds.startTimer({ table });
      insertsInFlight.inc({ table });
      try {
        await store.insert(table, values, dedupToken);
      } catch (err) {
        insertFailures.inc({ table });
        throw err;
      } finally {
        end();
        insertsInFlight.dec({ table });
      }
      rows.inc({ table }, values.length);
      lastInsert.set(table, Date.now());
    },
    async rows<T>(query: string, params?: Record<string, unknown>) {
      const end = querySeconds.startTimer();
      queriesInFlight.inc();
      try {
        return await store.rows<T>(query, params);
      } catch (err) {
        queryFailures.inc();
        throw err;
      } finally {
        end();
        queriesInFlight.dec();
      }
    },
    close: () => store.close(),
  };
  return { store: observed, activity: { lastInsertAt: (table) => lastInsert.get(table) } };
}
