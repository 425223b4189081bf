// The in-process bus checks no schema (infra/bus/memoryBus.ts): the collectors' guards
// (ingest/normalize.ts) are what keep a malformed venue message out of the store. Frames with bad
// numbers are sent on a real socket (the simulator's Bitstamp, paused, so that nothing else is
// sent); every event that reaches the bus must pass the schema Kafka checks, and the store must hold
// the one good trade only.
import { afterAll, expect, test } from 'vitest';
import { startTradeSink } from '../aggregate/tradeSink.ts';
import { startCollector } from '../ingest/collector.ts';
import { bitstamp } from '../ingest/venues/bitstamp.ts';
import { createMemoryBus } from '../infra/bus/memoryBus.ts';
import { marketEvent, topics, type MarketEvent } from '../infra/events.ts';
import { startSimulator } from '../simulator/simulator.ts';
import { openTestStore, silentLog } from './support/harness.ts';
import { until } from './support/until.ts';

const opened = await openTestStore();
afterAll(() => opened.dispose());

test('trades and book levels with bad numbers never reach the bus nor the store', async () => {
  const { store } = opened;
  const sim = await startSimulator({ seed: 14, venues: ['bitstamp'], tickers: ['BTC'], tradesPerSecondPerMarket: 0 });
  sim.pause();
  const bus = createMemoryBus();
  const seen: MarketEvent[] = [];
  const watcher = await bus.subscribe({ group: 'watcher', topics, onBatch: async (records) => void seen.push(...records.map((r) => r.event)) });
  const sink = await startTradeSink({ bus, store, log: silentLog, batchRows: 100, batchMs: 50 });
  const collector = await startCollector({ venue: bitstamp, endpoints: sim.endpoints('bitstamp'), bus, log: silentLog, tuning: { bookEveryMs: 50 } });
  const server = sim.venue('bitstamp');
  const symbol = 'btcusd';
  await until(() => [...server.clients].some((c) => c.topics.has(`live_trades_${symbol}`) && c.topics.has(`order_book_${symbol}`)), 'subscribed');
  const micros = () => String(Date.now() * 1_000);
  const trade = (id: number, price: string, amount: string) => ({ event: 'trade', channel: `live_trades_${symbol}`, data: { id, price_str: price, amount_str: amount, type: 0, microtimestamp: micros() } });
  const frames = [
    trade(1, '-1', '1'),
    trade(2, 'abc', '1'),
    trade(3, '1e999', '1'),
    trade(4, '100', '0'),
    trade(5, '100', '-3'),
    trade(6, '100.5', '2'),
    { event: 'data', channel: `order_book_${symbol}`, data: { microtimestamp: micros(), bids: [['abc', '1'], ['100', '1'], ['99', '-2']], asks: [['1e999', '1'], ['101', '0.5'], ['102', 'NaN']] } },
  ];
  for (const client of server.clients) for (const frame of frames) server.send(client, frame);

  const books = () => seen.filter((e) => e.type === 'book' && e.market === symbol);
  await until(() => seen.some((e) => e.type === 'trade') && books().length >= 2, 'the good trade and books');
  await collector.stop();
  await sink.stop();
  await watcher.stop();
  await bus.close();
  await sim.close();

  const refused = seen.filter((e) => !marketEvent.safeParse(e).success);
  expect(refused).toEqual([]);
  expect(seen.filter((e) => e.type === 'trade').map((e) => e.type === 'trade' && e.tradeId)).toEqual(['6']);
  for (const book of books()) expect(book).toMatchObject({ bids: [[100, 1]], asks: [[101, 0.5]] });
  const stored = await store.rows<{ trade_id: string; price: number; quantity: number }>("SELECT trade_id, price, quantity FROM trades WHERE venue = 'bitstamp'");
  expect(stored.map((r) => ({ ...r, price: Number(r.price), quantity: Number(r.quantity) }))).toEqual([{ trade_id: '6', price: 100.5, quantity: 2 }]);
}, 60_000);
