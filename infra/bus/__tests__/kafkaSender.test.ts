// The producing half of the Kafka bus over a stand-in for kafkajs's producer whose requests the
// test answers (the Kafka tests run the same rules against a broker): what a flush
// waits for, what a failed request refuses, and when a request goes out.
import { afterEach, expect, test, vi } from 'vitest';
import type { Producer, ProducerBatch } from 'kafkajs';
import type { MarketEvent, TradeEvent } from '../../events.ts';
import { KafkaSender } from '../kafkaSender.ts';
import { PublishGate } from '../publishGate.ts';
import { until } from '../../../test/support/until.ts';

const trade = (i: number): TradeEvent => ({
  type: 'trade', venue: 'v', market: 'BTCUSDT', asset: 'bitcoin', quote: 'USDT', ts: 1_700_000_000_000 + i, receivedAt: 1_700_000_000_000 + i,
  tradeId: String(i), price: 1, quantity: 1, side: 'buy',
});

/** A producer whose n-th request (from 0) is acknowledged or refused as `answer(n)` says, when it says. */
function scriptedProducer(answer: (call: number) => boolean | Promise<boolean>) {
  const requests: string[][] = [];
  const producer = {
    sendBatch: async (batch: ProducerBatch) => {
      const call = requests.push(batch.topicMessages!.flatMap((t) => t.messages.map((m) => (JSON.parse(String(m.value)) as TradeEvent).tradeId))) - 1;
      if (!(await answer(call))) throw new Error('refused (test)');
      return [];
    },
  } as unknown as Producer;
  return { producer, requests };
}

/** An answer the test gives later. */
function later(): { answer: Promise<boolean>; give: (ok: boolean) => void } {
  let give: (ok: boolean) => void = () => {};
  const answer = new Promise<boolean>((resolve) => (give = resolve));
  return { answer, give };
}

const senders: KafkaSender[] = [];
function senderOf(producer: Producer, options: { maxBatch?: number; maxBuffered?: number; lingerMs?: number } = {}) {
  const gate = new PublishGate();
  const sender = new KafkaSender(producer, gate, { lingerMs: 60_000, maxBatch: 1, maxBuffered: 10, ...options });
  senders.push(sender);
  return { sender, gate };
}
afterEach(() => {
  for (const s of senders.splice(0)) s.stop();
  vi.useRealTimers();
});

test('a flush waits for its own events, in flight or not, and resolves though a request after them fails', async () => {
  const first = later();
  const { producer, requests } = scriptedProducer((call) => (call === 0 ? first.answer : false));
  const { sender, gate } = senderOf(producer);
  sender.publish([trade(1)]);
  await until(() => requests.length === 1, 'the first request');
  let settled = false;
  const flushed = sender.flush().finally(() => (settled = true));
  sender.publish([trade(2)]);
  // A turn of the event loop: the flush is still waiting for the first request.
  await new Promise((r) => setImmediate(r));
  expect(settled).toBe(false);
  first.give(true);
  await flushed;
  // Then 2 alone, refused (retried by the flush's own turn): the flush does not wait for it.
  expect(requests[0]).toEqual(['1']);
  expect(requests.length).toBeGreaterThan(1);
  for (const ids of requests.slice(1)) expect(ids).toEqual(['2']);
  expect(gate.topicStats('trades').published).toBe(1);
  expect(sender.held().get('trades')!.records).toBe(1);
});

test('a flush whose own events cannot be sent rejects naming how many, and they stay held in their order', async () => {
  const { producer, requests } = scriptedProducer(() => false);
  const { sender, gate } = senderOf(producer, { maxBatch: 2 });
  sender.publish([trade(1), trade(2)]);
  await expect(sender.flush()).rejects.toThrow(/^kafka unavailable: 2 events not sent yet$/);
  expect(requests.length).toBeGreaterThan(0);
  for (const ids of requests) expect(ids).toEqual(['1', '2']);
  expect(gate.topicStats('trades')).toEqual({ published: 0, dropped: 0, conflated: 0 });
  expect(sender.held().get('trades')!.records).toBe(2);
});

test('a failed request back in front of a full buffer refuses the newest, counted on their topic', async () => {
  const first = later();
  const { producer, requests } = scriptedProducer(() => first.answer);
  const { sender, gate } = senderOf(producer, { maxBatch: 2, maxBuffered: 3 });
  sender.publish([trade(1), trade(2)]);
  await until(() => requests.length === 1, 'the first request');
  // The two are in flight: the buffer takes three more, and refuses the sixth.
  sender.publish([trade(3), trade(4), trade(5), trade(6)]);
  expect(gate.topicStats('trades').dropped).toBe(1);
  expect(sender.held().get('trades')!.records).toBe(5);
  first.give(false);
  // Back in front, 1 and 2 push 4 and 5 past the bound.
  await until(() => gate.topicStats('trades').dropped === 3, 'the refusals after the failure');
  expect(sender.held().get('trades')!.records).toBe(3);
});

test('a request waits the linger unless a batch is full', async () => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
  const { producer, requests } = scriptedProducer(() => true);
  const { sender } = senderOf(producer, { maxBatch: 3, lingerMs: 50 });
  sender.publish([trade(1)]);
  await vi.advanceTimersByTimeAsync(49);
  expect(requests).toHaveLength(0);
  await vi.advanceTimersByTimeAsync(1);
  expect(requests).toEqual([['1']]);
  sender.publish([trade(2), trade(3), trade(4)]);
  await vi.advanceTimersByTimeAsync(0);
  expect(requests).toEqual([['1'], ['2', '3', '4']]);
});

test('the refused events themselves reach the refusal listeners: at publish, and the newest after a failed request', async () => {
  const first = later();
  const { producer, requests } = scriptedProducer(() => first.answer);
  const { sender, gate } = senderOf(producer, { maxBatch: 2, maxBuffered: 3 });
  const heard: MarketEvent[][] = [];
  gate.onRefused((events) => heard.push([...events]));
  sender.publish([trade(1), trade(2)]);
  await until(() => requests.length === 1, 'the first request');
  sender.publish([trade(3), trade(4), trade(5), trade(6)]);
  // A collector recovers what the bus refused: it needs the events, not only their count.
  expect(heard).toEqual([[trade(6)]]);
  first.give(false);
  await until(() => gate.topicStats('trades').dropped === 3, 'the refusals after the failure');
  expect(heard).toEqual([[trade(6)], [trade(4)], [trade(5)]]);
});

test('a publish that leaves nothing waiting starts no linger: the next event waits a whole linger of its own', async () => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
  const { producer, requests } = scriptedProducer(() => true);
  const { sender, gate } = senderOf(producer, { maxBatch: 3, lingerMs: 50 });
  // Fails its schema: counted, not buffered.
  sender.publish([{ ...trade(0), price: -1 }]);
  sender.publish([]);
  expect(gate.totals().invalid).toBe(1);
  await vi.advanceTimersByTimeAsync(30);
  sender.publish([trade(1)]);
  await vi.advanceTimersByTimeAsync(49);
  expect(requests).toHaveLength(0);
  await vi.advanceTimersByTimeAsync(1);
  expect(requests).toEqual([['1']]);
});
