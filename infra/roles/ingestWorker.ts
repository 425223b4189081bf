// The collectors of a process that also serves the API, in a worker thread of their own
// (startIngestWorker, ingest.ts): frames parsed and books kept here never hold the API's event loop.
// Events go to the parent's bus in batches (JSON text: cheaper for the parent to read than a
// structured clone of the objects), the collectors' metrics every second.
import { parentPort, workerData } from 'node:worker_threads';
import { findCcxtVenue, findNativeVenue } from '../../ingest/venues/registry.ts';
import type { Bus } from '../bus/bus.ts';
import type { MarketEvent } from '../events.ts';
import { createLogger } from '../log.ts';
import { routeGaps, routeRefused, startCollectors, type IngestParentMessage, type IngestWorkerData, type IngestWorkerMessage } from './ingest.ts';
import { Lifecycle } from './lifecycle.ts';
import { currentThreadId, lowerThreadPriority } from './threadPriority.ts';
import { answerParent, type WorkerLifeMessage } from './workerThread.ts';

/** A batch is posted at most this long after its first event, or once it holds `forwardMaxEvents`. */
const forwardEveryMs = 5;
const forwardMaxEvents = 2_000;
const metricsEveryMs = 1_000;

/** The bus as the collectors see it: events gathered into batches for the parent thread. */
function forwardingBus(post: (message: IngestWorkerMessage) => void): Pick<Bus, 'publish' | 'flush'> {
  let pending: MarketEvent[] = [];
  let timer: NodeJS.Timeout | undefined;
  const flush = async () => {
    clearTimeout(timer);
    timer = undefined;
    if (pending.length === 0) return;
    post({ type: 'events', json: JSON.stringify(pending) });
    pending = [];
  };
  return {
    publish(events) {
      for (const event of events) pending.push(event);
      if (pending.length >= forwardMaxEvents) void flush();
      else timer ??= setTimeout(flush, forwardEveryMs);
    },
    flush,
  };
}

const port = parentPort!;
const post = (message: IngestWorkerMessage | WorkerLifeMessage) => port.postMessage(message);
const data = workerData as IngestWorkerData;
const log = createLogger(data.config.LOG_LEVEL, { role: 'ingest', thread: 'worker' }, data.prettyLog);
const life = new Lifecycle(log, data.config.SHUTDOWN_DEADLINE_MS);
// Short of CPU, the API's thread and the store go first: frames wait in the sockets' buffers.
const nice = lowerThreadPriority(data.config.INGEST_THREAD_NICE);
log.debug({ nice }, nice === undefined ? "the collectors' thread keeps the process's priority (no /proc/thread-self)" : "the collectors' thread priority set");
const bus = forwardingBus(post);
const threadId = currentThreadId();
if (nice !== undefined && threadId !== undefined) post({ type: 'priority', threadId, nice });
let reporting: NodeJS.Timeout | undefined;
let report = () => {};
answerParent(port, life, async () => {
  clearInterval(reporting);
  await bus.flush();
  report();
});
const collectors = await startCollectors({ config: data.config, log, life }, bus, {
  venues: data.venues.map((id) => findNativeVenue(id)!),
  ccxtVenues: data.ccxtVenues.map((id) => findCcxtVenue(id)!),
  assets: data.assets && new Set(data.assets),
  endpointsOf: (venue) => data.endpoints[venue.id],
  ...(data.lastStored ? { lastStored: new Map(Object.entries(data.lastStored).map(([venue, markets]) => [venue, new Map(markets)])) } : {}),
  ...(data.unfinishedGaps ? { unfinishedGaps: new Map(Object.entries(data.unfinishedGaps)) } : {}),
});
port.on('message', (message: IngestParentMessage | { type: 'stop' }) => {
  if (message.type === 'refused') routeRefused(collectors, JSON.parse(message.json) as MarketEvent[]);
  if (message.type === 'gaps') routeGaps(collectors, message.venue, message.gaps);
});
report = () => post({ type: 'metrics', collectors: collectors.map((c) => c.metrics()) });
report();
reporting = setInterval(report, metricsEveryMs);
post({ type: 'started' });
