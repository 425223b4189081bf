// The demo's simulator in a worker thread of its own (started by infra/roles/demo.ts): with the
// universe, thousands of simulated markets move their books every tick, and on the demo's main
// thread they held the event loop the aggregator, the index runner and the API share.
import { parentPort, workerData } from 'node:worker_threads';
import { createLogger } from '../infra/log.ts';
import { Lifecycle } from '../infra/roles/lifecycle.ts';
import type { DemoSimulatorData, DemoSimulatorMessage, WriteArchivesRequest } from '../infra/roles/demo.ts';
import { answerParent, type WorkerLifeMessage } from '../infra/roles/workerThread.ts';
import { lowerThreadPriority } from '../infra/roles/threadPriority.ts';
import { writeDemoArchives, type DemoArchives } from './archiveFiles.ts';
import { planDemoHistory } from './history.ts';
import { startSimulator, type SimulatorOptions } from './simulator.ts';

/** The nice value of the simulator's thread: the collectors' default (INGEST_THREAD_NICE). */
const simulatorThreadNice = 10;

const port = parentPort!;
const post = (message: DemoSimulatorMessage | WorkerLifeMessage) => port.postMessage(message);
const data = workerData as DemoSimulatorData;
const log = createLogger(data.logLevel, { role: 'demo', thread: 'simulator' }, data.prettyLog);
const life = new Lifecycle(log, data.shutdownDeadlineMs);
answerParent(port, life);

const simulator = await startSimulator(data.options as SimulatorOptions);
// The simulator stands for the venues, which a deployment reaches over the network: short of CPU,
// the service's threads go first, as they would on a machine of their own (test/bench/RESULTS.md).
const nice = lowerThreadPriority(simulatorThreadNice);
log.debug({ nice }, nice === undefined ? "the simulator's thread keeps the process's priority (no /proc/thread-self)" : "the simulator's thread priority set");
life.add('simulator', 'base', () => simulator.close());

/** The first trade id the simulator printed (or is to print) on a market: the history's ids end below it. */
function firstLiveId(venue: 'binance' | 'gate', symbol: string): number {
  const server = simulator.venue(venue);
  const market = server.listing.markets.find((m) => m.symbol === symbol);
  if (!market) throw new Error(`the simulator lists no ${symbol} on ${venue}`);
  return server.printed.of(symbol)[0]?.id ?? market.nextTradeId;
}

async function writeArchives(request: WriteArchivesRequest): Promise<DemoArchives> {
  const plan = planDemoHistory({ days: request.days, stepMs: 900_000, now: request.now, seed: request.seed, priceOf: (t) => simulator.reference(t, 'USD') });
  return writeDemoArchives(request.dir, plan, firstLiveId);
}

port.on('message', (message: { type: string }) => {
  if (message.type !== 'write-archives') return;
  writeArchives(message as WriteArchivesRequest).then(
    (archives) => post({ type: 'archives-written', archives }),
    (err: unknown) => post({ type: 'archives-failed', message: err instanceof Error ? err.message : String(err) }),
  );
});
post({ type: 'endpoints', endpoints: Object.fromEntries(simulator.venues.map((id) => [id, simulator.endpoints(id)])) });
post({ type: 'started' });
