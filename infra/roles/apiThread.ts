import type { Bus, Subscription } from '../bus/bus.ts';
import type { TradeEvent } from '../events.ts';
import { busTrades } from '../../api/stream/tradeFeed.ts';
import { localView } from '../health.ts';
import type { ApiAnswers, ApiParentMessage, ApiRequest, ApiWorkerData, ApiWorkerMessage } from './apiWorker.ts';
import type { RoleContext } from './context.ts';
import type { RoleStore } from './store.ts';
import { startWorkerThread } from './workerThread.ts';

/**
 * The API, its operator endpoints and the admin channel in a worker thread (`apiWorker.ts`), for
 * a process that also collects and aggregates: the sinks' inserts, the index runner and the
 * collectors' batches arriving here would otherwise hold its responses. This thread answers what
 * the worker asks of the store (whose deadlines and fault injection apply as to any caller), of
 * this process's metrics and readiness, and sends it the bus's trades for the stream.
 */
export async function startApiThread(ctx: RoleContext, opened: RoleStore, options: { role: string; bus?: Bus; keySecret: string }): Promise<{ url: string }> {
  const { config, log, life, metrics, checks } = ctx;
  // Ahead of the pipeline's queries (storeLane.ts): a request must not wait for the index runner's.
  const store = opened.foreground;
  const view = localView(metrics, () => checks);
  const answer = (request: ApiRequest): Promise<ApiAnswers[ApiRequest['call']]> => {
    switch (request.call) {
      case 'rows':
        return store.rows(request.query, request.params);
      case 'insert':
        return store.insert(request.table, request.rows, request.dedupToken);
      case 'metricsText':
        return view.metricsText();
      case 'metricValues':
        return view.metricValues(request.name);
      case 'readiness':
        return view.readiness();
    }
  };
  // The bus is read for the stream from its first subscription to trades on, and only the trades
  // of the assets subscribed to are sent.
  let trades: Pick<Subscription, 'stop'> | undefined;
  let subscribing = false;
  let wanted = new Set<string>();
  // Stopped with the consumers, after the worker (the front), which holds the stream's connections.
  life.add('api-trades', 'consumers', async () => trades?.stop());
  let url = '';
  const data: ApiWorkerData = { config, role: options.role, keySecret: options.keySecret, prettyLog: process.stdout.isTTY === true };
  await startWorkerThread<ApiWorkerMessage>(ctx, 'api', 'front', new URL('./apiWorker.ts', import.meta.url), data, (message, worker) => {
    const send = (reply: ApiParentMessage) => worker.postMessage(reply);
    switch (message.type) {
      case 'ask': {
        const { id } = message;
        answer(message.request).then(
          (value) => send({ type: 'reply', id, value }),
          (err: Error) => send({ type: 'reply', id, error: { name: err.name, message: err.message } }),
        );
        return;
      }
      case 'trades': {
        wanted = new Set(message.assets);
        if (!options.bus || subscribing) return;
        subscribing = true;
        const forward = (events: readonly TradeEvent[]) => {
          const sent = events.filter((e) => wanted.has(e.asset));
          if (sent.length > 0) send({ type: 'trades', events: sent });
        };
        busTrades(options.bus)(forward, () => [...wanted]).then(
          (subscription) => void (trades = subscription),
          (err: unknown) => log.error({ err }, "the stream's trades channel could not subscribe to the bus: it sends nothing"),
        );
        return;
      }
      case 'fault':
        opened.faults?.set(message.fault);
        return;
      case 'listening':
        url = message.url;
        return;
    }
  });
  return { url };
}
