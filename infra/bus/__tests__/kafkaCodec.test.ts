// Events as Kafka messages, on their own: the key, the value and the header another client reads,
// and what a reader refuses.
import { expect, test } from 'vitest';
import type { TradeEvent } from '../../events.ts';
import { decodeEvent, encodeEvent } from '../kafkaCodec.ts';

const trade: TradeEvent = {
  type: 'trade', venue: 'v', market: 'BTCUSDT', asset: 'bitcoin', quote: 'USDT', ts: 1_700_000_000_000, receivedAt: 1_700_000_000_001,
  tradeId: '1', price: 1.5, quantity: 2, side: 'sell',
};

test('an event is keyed by its asset, its value is its JSON, and it says its schema version', () => {
  expect(encodeEvent(trade)).toEqual({ key: 'bitcoin', value: JSON.stringify(trade), headers: { 'schema-version': '1' } });
});

test('a message decodes to its event when it passes its topic\'s schema, as text or bytes', () => {
  expect(decodeEvent('trades', JSON.stringify(trade))).toEqual(trade);
  expect(decodeEvent('trades', Buffer.from(JSON.stringify(trade)))).toEqual(trade);
});

test('not JSON, a tombstone, a failed schema or an event of another topic decode to nothing', () => {
  expect(decodeEvent('trades', 'not json')).toBeUndefined();
  expect(decodeEvent('trades', null)).toBeUndefined();
  expect(decodeEvent('trades', JSON.stringify({ ...trade, price: -1 }))).toBeUndefined();
  expect(decodeEvent('books', JSON.stringify(trade))).toBeUndefined();
});
