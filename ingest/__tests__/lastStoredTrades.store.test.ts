// Where a restart's recovery starts: the last trade the store holds of each market, and the gaps a
// run that died opened and did not end. On a real chDB store, written the way the service writes.
import { afterAll, beforeAll, expect, test } from 'vitest';
import { startGapSink } from '../../aggregate/gapSink.ts';
import { createMemoryBus } from '../../infra/bus/memoryBus.ts';
import type { GapEvent } from '../../infra/events.ts';
import type { Store } from '../../infra/store.ts';
import { openTestStore, silentLog, trade } from '../../test/support/harness.ts';
import { until } from '../../test/support/until.ts';
import { lastStoredTrades, unfinishedGaps } from '../lastStoredTrades.ts';
import { integerTradeNumber } from '../venue.ts';

let store: Store;
let dispose: () => Promise<void>;
beforeAll(async () => ({ store, dispose } = await openTestStore()));
afterAll(async () => dispose());

const now = Date.UTC(2026, 10, 27, 12);
const base = { asset: 'bitcoin', quote: 'USDT', price: 100, quantity: 1 };

test('the last stored trade of each market of each venue: by number where the id is one, within the window', async () => {
  await store.insert('trades', [
    trade({ ...base, venue: 'binance', market: 'BTCUSDT', trade_id: '41', ts: now - 60_000 }),
    // Two at the last millisecond: the higher number is the last.
    trade({ ...base, venue: 'binance', market: 'BTCUSDT', trade_id: '43', ts: now - 5_000 }),
    trade({ ...base, venue: 'binance', market: 'BTCUSDT', trade_id: '42', ts: now - 5_000 }),
    trade({ ...base, venue: 'bitmex', market: 'XBTUSD', quote: 'USD', trade_id: 'uuid-b', ts: now - 7_000 }),
    // Older than the window: not a start.
    trade({ ...base, venue: 'binance', market: 'ETHUSDT', asset: 'ethereum', trade_id: '9', ts: now - 3 * 3_600_000 }),
    // Another venue, not asked.
    trade({ ...base, venue: 'okx', market: 'BTC-USDT', trade_id: '5', ts: now - 1_000 }),
  ]);
  const last = await lastStoredTrades(store, [{ id: 'binance', history: { seqOf: integerTradeNumber } }, { id: 'bitmex' }], 3_600_000, now);
  expect([...last.keys()].sort()).toEqual(['binance', 'bitmex']);
  expect(Object.fromEntries(last.get('binance')!)).toEqual({ BTCUSDT: { ts: now - 5_000, tradeId: '43', seq: 43 } });
  expect(Object.fromEntries(last.get('bitmex')!)).toEqual({ XBTUSD: { ts: now - 7_000, tradeId: 'uuid-b' } });
});

test('gaps a run opened and did not end, and gaps it ended in the last 10 minutes, come back with their id, span and highest version; older ended ones do not', async () => {
  const gap = (gapId: string, version: number, state: GapEvent['state'], more: Partial<GapEvent> = {}): GapEvent => ({
    type: 'gap', venue: 'binance', market: 'BTCUSDT', asset: 'bitcoin', quote: 'USDT', ts: now - 10_000 + version, receivedAt: now - 10_000 + version,
    gapId, version, cause: 'reconnect', state, fromTs: now - 20_000, toTs: now - 15_000, recovered: 0, ...more,
  });
  const bus = createMemoryBus();
  const sink = await startGapSink({ bus, store, log: silentLog, batchRows: 1, batchMs: 10 });
  const longAgo = now - 30 * 60_000;
  const events = [
    gap('left-open', 1, 'open', { fromSeq: 100, toSeq: 104, missing: 5 }),
    gap('ended-lately', 1, 'open'),
    gap('ended-lately', 2, 'recovered', { recovered: 3 }),
    gap('ended-long-ago', 1, 'open', { ts: longAgo, receivedAt: longAgo }),
    gap('ended-long-ago', 2, 'unrecoverable', { ts: longAgo + 1, receivedAt: longAgo + 1, reason: 'venue_refused' }),
    gap('time-open', 1, 'open', { market: 'ETHUSDT', asset: 'ethereum', cause: 'restart' }),
  ];
  bus.publish(events);
  await until(() => sink.stats().inserted === events.length, 'the gaps stored');
  await sink.stop();
  const open = await unfinishedGaps(store, ['binance'], 3_600_000, now);
  expect(open.get('binance')!.sort((a, b) => a.gapId!.localeCompare(b.gapId!))).toEqual([
    { symbol: 'BTCUSDT', cause: 'reconnect', gapId: 'ended-lately', versionBase: 2, after: { ts: now - 20_000 }, until: { ts: now - 15_000 } },
    {
      symbol: 'BTCUSDT', cause: 'reconnect', gapId: 'left-open', versionBase: 1,
      after: { ts: now - 20_000, seq: 99 }, until: { ts: now - 15_000, seq: 105 }, missing: { first: 100, last: 104 },
    },
    { symbol: 'ETHUSDT', cause: 'restart', gapId: 'time-open', versionBase: 1, after: { ts: now - 20_000 }, until: { ts: now - 15_000 } },
  ]);
  expect((await unfinishedGaps(store, ['bitmex'], 3_600_000, now)).size).toBe(0);
});

test('a gap that ended recovered with every trade it recovered in the store is not sent to the venue again; one the store lacks a trade of is', async () => {
  const at = now + 86_400_000; // a day of its own: the trades and gaps of the tests above are out of its window
  const gap = (gapId: string, market: string, recovered: number): GapEvent[] => [
    { type: 'gap', venue: 'kraken', market, asset: 'solana', quote: 'USD', ts: at - 9_000, receivedAt: at - 9_000, gapId, version: 1, cause: 'restart', state: 'open', fromTs: at - 40_000, toTs: at - 10_000, recovered: 0 },
    { type: 'gap', venue: 'kraken', market, asset: 'solana', quote: 'USD', ts: at - 8_000, receivedAt: at - 8_000, gapId, version: 2, cause: 'restart', state: 'recovered', fromTs: at - 40_000, toTs: at - 10_000, recovered },
  ];
  const bus = createMemoryBus();
  const sink = await startGapSink({ bus, store, log: silentLog, batchRows: 1, batchMs: 10 });
  const events = [...gap('all-stored', 'SOL/USD', 2), ...gap('one-missing', 'SOL/EUR', 2), ...gap('nothing-missed', 'SOL/USDT', 0)];
  bus.publish(events);
  await until(() => sink.stats().inserted === events.length, 'the gaps stored');
  await sink.stop();
  const sol = { asset: 'solana', quote: 'USD', price: 150, quantity: 1, venue: 'kraken' };
  await store.insert('trades', [
    // The bounds' own trades (the last before, the first after) are not inside.
    trade({ ...sol, market: 'SOL/USD', trade_id: 'b0', ts: at - 40_000 }),
    trade({ ...sol, market: 'SOL/USD', trade_id: 'r1', ts: at - 30_000 }),
    trade({ ...sol, market: 'SOL/USD', trade_id: 'r2', ts: at - 20_000 }),
    trade({ ...sol, market: 'SOL/USD', trade_id: 'b1', ts: at - 10_000 }),
    // One of the two recovered is stored, and the bounds are: the other was lost with the process.
    trade({ ...sol, market: 'SOL/EUR', quote: 'EUR', trade_id: 'b0', ts: at - 40_000 }),
    trade({ ...sol, market: 'SOL/EUR', quote: 'EUR', trade_id: 'r1', ts: at - 30_000 }),
    trade({ ...sol, market: 'SOL/EUR', quote: 'EUR', trade_id: 'b1', ts: at - 10_000 }),
  ]);
  const again = await unfinishedGaps(store, ['kraken'], 3_600_000, at);
  expect(again.get('kraken')!.map((g) => g.gapId)).toEqual(['one-missing']);
});

test('opened before a time, open only: the gaps an earlier run left open, read again after a start (watchLateGaps)', async () => {
  const at = now + 2 * 86_400_000; // a day of its own
  const readAt = at - 5_000;
  const gap = (gapId: string, version: number, state: GapEvent['state'], ts: number, recovered = 0): GapEvent => ({
    type: 'gap', venue: 'bitstamp', market: 'btcusd', asset: 'bitcoin', quote: 'USD', ts, receivedAt: ts,
    gapId, version, cause: 'restart', state, fromTs: at - 60_000, toTs: at - 50_000, recovered,
  });
  const bus = createMemoryBus();
  const sink = await startGapSink({ bus, store, log: silentLog, batchRows: 1, batchMs: 10 });
  const events = [
    gap('earlier-open', 1, 'open', readAt - 1),
    gap('earlier-ended', 1, 'open', readAt - 3),
    // Ended with two trades the store does not hold: the start's read takes it again, the late read does not.
    gap('earlier-ended', 2, 'recovered', readAt - 2, 2),
    // This run's own, opened at the start read's time and after it.
    gap('own-at-read', 1, 'open', readAt),
    gap('own-later', 1, 'open', readAt + 1_000),
  ];
  bus.publish(events);
  await until(() => sink.stats().inserted === events.length, 'the gaps stored');
  await sink.stop();
  const late = await unfinishedGaps(store, ['bitstamp'], 3_600_000, at, 0, readAt);
  expect(late.get('bitstamp')!.map((g) => g.gapId)).toEqual(['earlier-open']);
  // The start's own read (ended ones of the last 10 minutes too, everything opened before now).
  const atStart = await unfinishedGaps(store, ['bitstamp'], 3_600_000, at);
  expect(atStart.get('bitstamp')!.map((g) => g.gapId).sort()).toEqual(['earlier-ended', 'earlier-open', 'own-at-read', 'own-later']);
});
