import { randomUUID } from 'node:crypto';
import { commitPositionsAfter, type Bus, type Subscription } from '../../infra/bus/bus.ts';
import type { TradeEvent } from '../../infra/events.ts';

/**
 * Where the stream's trades come from: `publish` gets each batch from the moment the source
 * resolves until it is stopped, at least every trade of the assets `subscribed` names at the time.
 * The bus (`busTrades`), or the thread that reads it for the API's own thread, which sends only
 * those (infra/roles/apiWorker.ts).
 */
export type TradeSource = (publish: (trades: readonly TradeEvent[]) => void, subscribed: () => readonly string[]) => Promise<Pick<Subscription, 'stop'>>;

/**
 * Every trade of the bus. Each API replica reads the `trades` topic in a consumer group of its own
 * (so every replica sees every trade), from the records published after it joined; it commits each
 * batch at once, since nothing here needs a trade again, and so that the in-process bus releases
 * them (with Kafka the group is never resumed).
 */
export function busTrades(bus: Bus): TradeSource {
  return async (publish) => {
    let subscription: Subscription | undefined;
    subscription = await bus.subscribe({
      group: `mds-api-stream-${randomUUID()}`,
      topics: ['trades'],
      start: 'latest',
      onBatch: async (records) => {
        publish(records.map((r) => r.event));
        // Kafka may hand a batch before subscribe() resolves: that one is simply not committed.
        await subscription?.commit(commitPositionsAfter(records));
      },
    });
    return subscription;
  };
}
