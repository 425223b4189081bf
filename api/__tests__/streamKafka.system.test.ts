// The stream with Kafka: two API replicas, each reading the trades topic in a group of its own,
// both send a trade published once (run through test/run.sh, which starts the Kafka mock).
import { once } from 'node:events';
import { randomUUID } from 'node:crypto';
import { afterAll, expect, test } from 'vitest';
import { WebSocket } from 'ws';
import type { Bus } from '../../infra/bus/bus.ts';
import { createKafkaBus } from '../../infra/bus/kafkaBus.ts';
import { useTestApi } from '../../test/support/apiHarness.ts';
import { silentLog } from '../../test/support/harness.ts';
import { until } from '../../test/support/until.ts';
import type { ApiServer } from '../server.ts';
import { busTrades } from '../stream/tradeFeed.ts';

function brokers(): string[] {
  const list = process.env.MDS_TEST_KAFKA_BROKERS;
  if (!list) throw new Error('MDS_TEST_KAFKA_BROKERS is not set: run this file through `bash test/run.sh`, which starts the Kafka mock');
  return list.split(',');
}

const buses: Bus[] = [];
// Registered first, so it runs last: after the APIs have stopped reading the buses.
afterAll(async () => {
  for (const bus of buses) await bus.close();
});
// The store and the key; the test starts two replicas on it.
const harness = useTestApi({ keyName: 'stream-kafka', listen: false });

async function kafkaBus(): Promise<Bus> {
  const bus = await createKafkaBus({ brokers: brokers(), lingerMs: 5, sessionTimeoutMs: 6_000, log: silentLog });
  buses.push(bus);
  return bus;
}

test('two API replicas on Kafka both send a trade published once', async () => {
  const { key } = harness;
  const apis: ApiServer[] = [];
  for (let i = 0; i < 2; i++) apis.push(await harness.serve({ trades: busTrades(await kafkaBus()) }));
  const tradeIds = apis.map((): string[] => []);
  const sockets = await Promise.all(
    apis.map(async (api, i) => {
      const ws = new WebSocket(`${api.url.replace('http', 'ws')}/v1/stream`, { headers: { 'x-api-key': key } });
      ws.on('message', (data) => {
        const message = JSON.parse(data.toString()) as { channel?: string; op?: string; data?: { tradeId: string }[] };
        if (message.channel === 'trades') for (const t of message.data!) tradeIds[i]!.push(t.tradeId);
      });
      await once(ws, 'open');
      ws.send(JSON.stringify({ op: 'subscribe', channel: 'trades', ids: ['bitcoin'] }));
      return ws;
    }),
  );

  // The topic is shared with other tests: this run's trades carry its own id prefix.
  const run = randomUUID().slice(0, 8);
  const producer = await kafkaBus();
  const published: string[] = [];
  const bothGot = () => published.find((id) => tradeIds.every((ids) => ids.includes(id)));
  // A replica's group starts at the latest offset once it has its partitions: publish one trade
  // every 250 ms until both have sent one.
  const publishUntilBothGot = async () => {
    if (bothGot()) return true;
    const tradeId = `${run}-${published.length}`;
    published.push(tradeId);
    const ts = Date.now();
    producer.publish([{ type: 'trade', venue: 'binance', market: 'BTCUSDT', asset: 'bitcoin', quote: 'USDT', tradeId, price: 100_000, quantity: 1, side: 'buy', ts, receivedAt: ts }]);
    await producer.flush();
    return false;
  };
  await until(publishUntilBothGot, 'a trade to reach both replicas', {
    timeoutMs: 30_000,
    everyMs: 250,
    context: () => `replica 0 got ${tradeIds[0]!.length}, replica 1 got ${tradeIds[1]!.length}`,
  });
  // Each replica sent each trade it read once.
  for (const ids of tradeIds) {
    const mine = ids.filter((id) => id.startsWith(run));
    expect(mine.every((id) => published.includes(id))).toBe(true);
    expect(new Set(mine).size).toBe(mine.length);
  }
  for (const ws of sockets) ws.close();
}, 60_000);
