import { randomUUID } from 'node:crypto';
import { commitPositionsAfter, type Bus, type Subscription } from '../../infra/bus/bus.ts';
import type { StreamHub } from './hub.ts';

/**
 * Every trade of the bus to the stream's subscribers. Each API replica reads the `trades` topic in
 * a consumer group of its own (so every replica sees every trade), from the records published
 * after it joined; it commits each batch at once, since nothing here needs a trade again, and so
 * that the in-process bus releases them (with Kafka the group is never resumed).
 */
export async function startTradeFeed(bus: Bus, hub: StreamHub): Promise<Subscription> {
  let subscription: Subscription | undefined;
  subscription = await bus.subscribe({
    group: `mds-api-stream-${randomUUID()}`,
    topics: ['trades'],
    start: 'latest',
    onBatch: async (records) => {
      hub.publishTrades(records.map((r) => r.event));
      // Kafka may hand a batch before subscribe() resolves: that one is simply not committed.
      await subscription?.commit(commitPositionsAfter(records));
    },
  });
  return subscription;
}
