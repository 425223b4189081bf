// The guards that keep malformed events off the in-process bus, which checks no schema: what they
// let through must pass the schema the Kafka boundary checks (infra/events.ts).
import { expect, test } from 'vitest';
import { bookEvent } from '../../infra/events.ts';
import type { Level } from '../orderBook.ts';
import { toBookEvent } from '../normalize.ts';
import type { VenueMarket } from '../venue.ts';

const market: VenueMarket = { symbol: 'btcusd', base: 'BTC', quote: 'USD', asset: 'bitcoin', contractSize: '1' };
const ts = 1_700_000_000_123;

test('a book event leaves out levels whose price or quantity is not a positive finite number', () => {
  const bids: Level[] = [[100, 1], [Number.NaN, 1], [99, 0], [98, -2], [Number.POSITIVE_INFINITY, 1], [97, 3]];
  const asks: Level[] = [[101, Number.NaN], [102, 2], [0, 1]];
  const event = toBookEvent('bitstamp', market, { bids, asks }, ts, ts + 5);
  expect(event).toEqual({ type: 'book', venue: 'bitstamp', market: 'btcusd', asset: 'bitcoin', quote: 'USD', ts, receivedAt: ts + 5, bids: [[100, 1], [97, 3]], asks: [[102, 2]] });
  expect(bookEvent.safeParse(event).success).toBe(true);
});

test('no book event when a side is left empty or the venue time is not a unix millisecond', () => {
  const good = { bids: [[100, 1]] as Level[], asks: [[101, 1]] as Level[] };
  expect(toBookEvent('bitstamp', market, { ...good, asks: [[Number.NaN, 1]] }, ts, ts)).toBeUndefined();
  expect(toBookEvent('bitstamp', market, { ...good, bids: [] }, ts, ts)).toBeUndefined();
  for (const bad of [Number.NaN, -1, 1.5, Number.POSITIVE_INFINITY]) expect(toBookEvent('bitstamp', market, good, bad, ts)).toBeUndefined();
});

test('whatever the guard lets through passes the bus schema', () => {
  const values = [1, 0.5, 0, -1, Number.NaN, Number.POSITIVE_INFINITY, Number.MIN_VALUE, 1e308];
  let built = 0;
  for (const p of values)
    for (const q of values)
      for (const t of [ts, Number.NaN, -5, 0]) {
        const event = toBookEvent('bitstamp', market, { bids: [[p, q], [1, 1]], asks: [[q, p]] }, t, ts);
        if (!event) continue;
        built += 1;
        expect(bookEvent.safeParse(event).success, JSON.stringify(event)).toBe(true);
      }
  // Every positive finite pair with a valid time, at both ts and 0.
  expect(built).toBe(4 * 4 * 2);
});
