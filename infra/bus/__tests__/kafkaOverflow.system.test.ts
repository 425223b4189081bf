// The Kafka adapter's producer buffer (`maxBuffered`) while its broker is unreachable: ten times the
// bound published, the rest refused and counted, the oldest kept; and when a broker answers at the
// same address again, exactly what was kept is delivered. Runs its own mock cluster (kcat, as
// test/run.sh does), since it kills it.
import type { Server } from 'node:net';
import { afterEach, expect, test } from 'vitest';
import type { TradeEvent } from '../../events.ts';
import type { BusRecord } from '../bus.ts';
import { createKafkaBus } from '../kafkaBus.ts';
import { brokerAgainAt, startMockCluster, stopMockCluster, type MockCluster } from '../../../test/support/kafkaMock.ts';
import { until } from '../../../test/support/until.ts';

const started: MockCluster[] = [];
const servers: Server[] = [];
afterEach(async () => {
  for (const cluster of started.splice(0)) await stopMockCluster(cluster);
  for (const server of servers.splice(0)) await new Promise((r) => server.close(r));
});

const asset = `overflow${process.pid}`;
const trade = (i: number): TradeEvent => ({
  type: 'trade', venue: 'overflow', market: 'OVFUSDT', asset, quote: 'USDT', tradeId: String(i),
  price: 10 + (i % 5), quantity: 1, side: 'buy', ts: 1_760_000_000_000 + i, receivedAt: 1_760_000_000_001 + i,
});

test('ten times maxBuffered with the broker gone: the oldest bound kept, the rest refused and counted, the kept delivered once it is back', async () => {
  const first = await startMockCluster();
  started.push(first);
  const bound = 100;
  // kafkajs gives up on a request after about 1.2 s instead of its default 10 s: the buffer's rules
  // are the same whenever a request fails, and the test waits less for the failures and the retries.
  const bus = await createKafkaBus({ brokers: [`127.0.0.1:${first.port}`], lingerMs: 5, maxBuffered: bound, retry: { retries: 2, initialRetryTime: 500 } });
  try {
    await stopMockCluster(first);

    // Ten chunks of the bound, 100 ms apart, while nothing answers at the broker's address.
    const sent = Array.from({ length: 10 * bound }, (_, i) => trade(i));
    for (let c = 0; c < 10; c++) {
      bus.publish(sent.slice(c * bound, (c + 1) * bound));
      await new Promise((r) => setTimeout(r, 100));
    }
    // A send in flight frees the buffer until it fails, then what overflows is refused in its turn:
    // either way the oldest `bound` events are kept, every other one counted as dropped.
    await until(() => bus.stats().dropped === 9 * bound, 'the refusals counted', 20_000);
    const during = bus.stats();
    expect(during).toMatchObject({ published: 0, dropped: 9 * bound, invalid: 0 });
    expect(during.topics.trades).toMatchObject({ published: 0, dropped: 9 * bound, heldRecords: bound });

    const again = await brokerAgainAt(first.port);
    started.push(again.cluster);
    servers.push(again.proxy);

    await until(() => bus.stats().published === bound, 'the kept events sent', 30_000);
    expect(bus.stats()).toMatchObject({ published: bound, dropped: 9 * bound });
    expect(bus.stats().topics.trades.heldRecords).toBe(0);

    const got: BusRecord<'trades'>[] = [];
    const sub = await bus.subscribe({ group: `overflow-${process.pid}`, topics: ['trades'], onBatch: async (records) => void got.push(...records.filter((r) => r.event.asset === asset)) });
    await until(() => got.length >= bound, 'the kept events read back', 20_000);
    await sub.stop();
    expect(got.map((r) => r.event)).toEqual(sent.slice(0, bound));
    await bus.close();
  } finally {
    // A failed run leaves the bus retrying a dead broker; its close would wait for ever.
    if (bus.stats().topics.trades.heldRecords > 0) void bus.close().catch(() => {});
  }
});
