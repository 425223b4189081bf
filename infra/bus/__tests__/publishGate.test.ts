// The counting and refusal logging every bus adapter shares, on its own.
import { afterEach, expect, test, vi } from 'vitest';
import { pino } from 'pino';
import type { LiquidationEvent, TradeEvent } from '../../events.ts';
import { PublishGate } from '../publishGate.ts';

const trade: TradeEvent = {
  type: 'trade', venue: 'v', market: 'BTCUSDT', asset: 'bitcoin', quote: 'USDT', ts: 1_700_000_000_000, receivedAt: 1_700_000_000_000,
  tradeId: '1', price: 1, quantity: 1, side: 'buy',
};
const liquidation: LiquidationEvent = {
  type: 'liquidation', venue: 'v', market: 'BTCUSDT', asset: 'bitcoin', quote: 'USDT', ts: 1_700_000_000_000, receivedAt: 1_700_000_000_000,
  liquidationId: '1', price: 1, quantity: 1, positionSide: 'long',
};

function recordingLog() {
  const lines: Record<string, unknown>[] = [];
  const log = pino({ level: 'info' }, { write: (s: string) => void lines.push(JSON.parse(s)) });
  return { log, lines };
}

afterEach(() => vi.useRealTimers());

test('validate names the topic of a valid event, and counts an invalid one without a topic', () => {
  const gate = new PublishGate();
  expect(gate.validate(trade)).toBe('trades');
  expect(gate.validate(liquidation)).toBe('liquidations');
  expect(gate.validate({ ...trade, price: -1 })).toBeUndefined();
  expect(gate.validate({ ...trade, tradeId: '' })).toBeUndefined();
  expect(gate.totals()).toEqual({ published: 0, dropped: 0, conflated: 0, invalid: 2 });
});

test('accepted, conflated and refused events are counted per topic, and totalled over the topics', () => {
  const gate = new PublishGate();
  gate.accepted('trades');
  gate.accepted('trades', 4);
  gate.accepted('books', 2);
  gate.conflated('books');
  gate.conflated('books');
  gate.refuse('trades', {});
  gate.refuse('liquidations', {}, 3);
  expect(gate.topicStats('trades')).toEqual({ published: 5, dropped: 1, conflated: 0 });
  expect(gate.topicStats('books')).toEqual({ published: 2, dropped: 0, conflated: 2 });
  expect(gate.topicStats('liquidations')).toEqual({ published: 0, dropped: 3, conflated: 0 });
  expect(gate.topicStats('statuses')).toEqual({ published: 0, dropped: 0, conflated: 0 });
  expect(gate.totals()).toEqual({ published: 7, dropped: 4, conflated: 2, invalid: 0 });
  // topicStats is a copy: changing it changes nothing.
  gate.topicStats('trades').published = 99;
  expect(gate.topicStats('trades').published).toBe(5);
});

test('a refusal is logged at error level with its topic, the count so far and the context, at most once per 10 s per topic', () => {
  vi.useFakeTimers({ toFake: ['Date'] });
  vi.setSystemTime(1_800_000_000_000);
  const { log, lines } = recordingLog();
  const gate = new PublishGate(log);
  gate.refuse('trades', { group: 'slow' }, 2);
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatchObject({ level: 50, topic: 'trades', dropped: 2, group: 'slow', msg: 'bus full: events refused and lost' });
  vi.setSystemTime(1_800_000_009_999);
  gate.refuse('trades', {});
  gate.refuse('books', {});
  expect(lines.map((l) => [l.topic, l.dropped])).toEqual([['trades', 2], ['books', 1]]);
  vi.setSystemTime(1_800_000_010_000);
  gate.refuse('trades', {});
  expect(lines.map((l) => [l.topic, l.dropped])).toEqual([['trades', 2], ['books', 1], ['trades', 4]]);
});

test('refusal listeners are called with the refused events an adapter still has, and not for a refusal without them', () => {
  const gate = new PublishGate();
  const heard: (readonly unknown[])[] = [];
  const stop = gate.onRefused((events) => heard.push(events));
  gate.refuse('trades', {}, 3);
  expect(heard).toEqual([]);
  gate.refuse('trades', {}, 1, [trade]);
  expect(heard).toEqual([[trade]]);
  stop();
  gate.refuse('trades', {}, 1, [trade]);
  expect(heard).toHaveLength(1);
  expect(gate.totals().dropped).toBe(5);
});

test('a refusal listener that throws: the refusal is counted, the other listeners still hear it, the failure is logged, and nothing is thrown to the adapter', () => {
  const { log, lines } = recordingLog();
  const gate = new PublishGate(log);
  const heard: (readonly unknown[])[] = [];
  gate.onRefused(() => {
    throw new Error('listener broke');
  });
  gate.onRefused((events) => heard.push(events));
  expect(() => gate.refuse('trades', {}, 2, [trade, trade])).not.toThrow();
  expect(heard).toEqual([[trade, trade]]);
  expect(gate.totals().dropped).toBe(2);
  const failures = lines.filter((l) => l.msg === 'a bus refusal listener failed: the refused events are counted as lost');
  expect(failures.map((l) => [l.level, l.topic, l.events, (l.err as { message: string }).message])).toEqual([[50, 'trades', 2, 'listener broke']]);
});
