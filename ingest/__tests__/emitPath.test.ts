// The one emit path of trades and liquidations, without sockets: reports in, events on a recording
// bus out. Expected events are written out here field by field.
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { describe, expect, test } from 'vitest';
import type { MarketEvent } from '../../infra/events.ts';
import { EmitPath, keepAll, RecentIds, ReplayDuplicates, RotationDuplicates, type EmitCounters, type Reported } from '../emitPath.ts';
import type { VenueMarket } from '../venue.ts';

const now = Date.UTC(2026, 0, 5, 12);
const btc: VenueMarket = { symbol: 'BTCUSDT', base: 'BTC', quote: 'USDT', asset: 'bitcoin', contractSize: '1' };
const ethPerp: VenueMarket = { symbol: 'ETH-PERP', base: 'ETH', quote: 'USDT', asset: 'ethereum', contractSize: '0.1' };
const followed = new Map([btc, ethPerp].map((m) => [m.symbol, m]));

const trade = (tradeId: string, fields: Partial<Extract<Reported, { kind: 'trade' }>> = {}): Reported => ({ kind: 'trade', symbol: 'BTCUSDT', tradeId, price: '50000.5', quantity: '0.25', side: 'buy', ts: now - 10, ...fields });
const liquidation = (liquidationId: string, fields: Partial<Extract<Reported, { kind: 'liquidation' }>> = {}): Reported => ({
  kind: 'liquidation', symbol: 'ETH-PERP', liquidationId, price: '3000', quantity: '20', positionSide: 'long', ts: now - 20, ...fields,
});

function path() {
  const batches: MarketEvent[][] = [];
  const lines: Record<string, unknown>[] = [];
  const log = pino({ level: 'info' }, new Writable({ write: (chunk, _enc, done) => (lines.push(JSON.parse(String(chunk))), done()) }));
  const counters: EmitCounters = { trades: 0, liquidations: 0, unknownMessages: 0 };
  const emit = new EmitPath({ venueId: 'testvenue', bus: { publish: (events) => void batches.push([...events]) }, log, market: (s) => followed.get(s), counters });
  return { emit, batches, counters, lines };
}

describe('EmitPath', () => {
  test('trades and liquidations of one frame become events in order, published in one batch, counted', () => {
    const { emit, batches, counters } = path();
    emit.emit([trade('1'), liquidation('L1'), trade('2', { side: 'sell', quantity: '1' })], now);
    expect(batches).toEqual([
      [
        { type: 'trade', venue: 'testvenue', market: 'BTCUSDT', asset: 'bitcoin', quote: 'USDT', tradeId: '1', price: 50000.5, quantity: 0.25, side: 'buy', ts: now - 10, receivedAt: now },
        // 20 contracts of 0.1 ETH.
        { type: 'liquidation', venue: 'testvenue', market: 'ETH-PERP', asset: 'ethereum', quote: 'USDT', liquidationId: 'L1', price: 3000, quantity: 2, positionSide: 'long', ts: now - 20, receivedAt: now },
        { type: 'trade', venue: 'testvenue', market: 'BTCUSDT', asset: 'bitcoin', quote: 'USDT', tradeId: '2', price: 50000.5, quantity: 1, side: 'sell', ts: now - 10, receivedAt: now },
      ],
    ]);
    expect(counters).toEqual({ trades: 2, liquidations: 1, unknownMessages: 0 });
  });

  test('markets not followed are dropped uncounted; nothing to publish publishes nothing', () => {
    const { emit, batches, counters } = path();
    emit.emit([trade('1', { symbol: 'DOGEUSDT' }), { kind: 'unreadable', of: 'trade', symbol: 'DOGEUSDT', id: '9' }], now);
    emit.emit([], now);
    expect(batches).toEqual([]);
    expect(counters).toEqual({ trades: 0, liquidations: 0, unknownMessages: 0 });
  });

  test('malformed, unreadable and untimely reports are refused and counted as unknown; the first untimely one is logged once', () => {
    const { emit, batches, counters, lines } = path();
    emit.emit(
      [
        trade('1', { price: '0' }),
        trade('', {}),
        { kind: 'unreadable', of: 'trade', symbol: 'BTCUSDT', id: '2' },
        { kind: 'unreadable', of: 'liquidation', symbol: 'ETH-PERP', id: 'L2' },
        trade('3', { ts: now - 86_400_001 }),
        liquidation('L3', { ts: now + 60_001 }),
        trade('4'),
      ],
      now,
    );
    expect(batches.map((b) => b.map((e) => (e.type === 'trade' ? e.tradeId : '')))).toEqual([['4']]);
    expect(counters).toEqual({ trades: 1, liquidations: 0, unknownMessages: 6 });
    expect(lines.filter((l) => String(l.msg).startsWith('event time implausibly far'))).toHaveLength(1);
    expect(lines[0]).toMatchObject({ market: 'BTCUSDT', ts: now - 86_400_001 });
  });

  test('a liquidation without a venue time takes its receive time', () => {
    const { emit, batches } = path();
    emit.emit([liquidation('L1', { ts: undefined })], now);
    expect(batches[0]![0]).toMatchObject({ ts: now, receivedAt: now });
  });

  test('the duplicate filter sees each followed report (kind, market, id) before it is converted; a duplicate is dropped uncounted', () => {
    const { emit, batches, counters } = path();
    const asked: string[] = [];
    const seen = new Set<string>();
    const once = { first: (kind: string, symbol: string, id: string) => (asked.push(`${kind}/${symbol}/${id}`), !seen.has(`${kind}/${id}`) && !!seen.add(`${kind}/${id}`)) };
    emit.emit([trade('1'), trade('1'), liquidation('1'), { kind: 'unreadable', of: 'trade', symbol: 'BTCUSDT', id: '1' }, { kind: 'unreadable', of: 'trade', symbol: 'BTCUSDT', id: '2' }, trade('1', { symbol: 'DOGEUSDT' })], now, once);
    expect(asked).toEqual(['trade/BTCUSDT/1', 'trade/BTCUSDT/1', 'liquidation/ETH-PERP/1', 'trade/BTCUSDT/1', 'trade/BTCUSDT/2']);
    expect(batches[0]!.map((e) => e.type)).toEqual(['trade', 'liquidation']);
    // Only the unreadable report with a new id was refused.
    expect(counters).toEqual({ trades: 1, liquidations: 1, unknownMessages: 1 });
  });

  test('without a filter every report passes', () => {
    const { emit, batches } = path();
    emit.emit([trade('1'), trade('1')], now);
    emit.emit([trade('1')], now, keepAll);
    expect(batches.flat()).toHaveLength(3);
  });
});

describe('RotationDuplicates (native: two sockets while a rotation overlaps)', () => {
  test('a frame from an overlapping socket passes each trade and liquidation once; trades and liquidations, markets, do not collide', () => {
    const { emit, batches } = path();
    const duplicates = new RotationDuplicates();
    emit.emit([trade('1'), liquidation('1')], now, duplicates.during(true));
    emit.emit([trade('1'), liquidation('1'), trade('2')], now, duplicates.during(true));
    emit.emit([trade('1', { symbol: 'ETH-PERP' })], now, duplicates.during(true));
    expect(batches.map((b) => b.map((e) => `${e.type}/${e.market}`))).toEqual([['trade/BTCUSDT', 'liquidation/ETH-PERP'], ['trade/BTCUSDT'], ['trade/ETH-PERP']]);
  });

  test('outside an overlap nothing is checked or kept; the keys are forgotten once nothing overlaps', () => {
    const duplicates = new RotationDuplicates();
    const quiet = duplicates.during(false);
    expect([quiet.first('trade', 'BTCUSDT', '1'), quiet.first('trade', 'BTCUSDT', '1')]).toEqual([true, true]);
    expect(duplicates.size).toBe(0);
    const overlap = duplicates.during(true);
    expect([overlap.first('trade', 'BTCUSDT', '1'), overlap.first('trade', 'BTCUSDT', '1')]).toEqual([true, false]);
    duplicates.settle(() => true);
    expect(duplicates.size).toBe(1);
    duplicates.settle(() => false);
    expect(duplicates.size).toBe(0);
    expect(duplicates.during(true).first('trade', 'BTCUSDT', '1')).toBe(true);
  });
});

describe('ReplayDuplicates (ccxt: a resubscription replays recent trades)', () => {
  test('a trade or liquidation id passes once per market, whatever the drain it comes in', () => {
    const { emit, batches } = path();
    const duplicates = new ReplayDuplicates();
    emit.emit([trade('1'), trade('2')], now, duplicates);
    emit.emit([trade('2'), trade('3'), liquidation('2'), trade('2', { symbol: 'ETH-PERP' })], now, duplicates);
    expect(batches.map((b) => b.map((e) => `${e.market}/${e.type === 'trade' ? e.tradeId : e.type === 'liquidation' ? e.liquidationId : ''}`))).toEqual([
      ['BTCUSDT/1', 'BTCUSDT/2'],
      ['BTCUSDT/3', 'ETH-PERP/2', 'ETH-PERP/2'],
    ]);
  });

  test('it remembers the last 1,000 trade ids and the last 200 liquidation ids of a market', () => {
    const duplicates = new ReplayDuplicates();
    for (let i = 0; i <= 1_000; i++) duplicates.first('trade', 'BTCUSDT', String(i));
    // 0 was the oldest of 1,001: forgotten; 1 is still known.
    expect(duplicates.first('trade', 'BTCUSDT', '1')).toBe(false);
    expect(duplicates.first('trade', 'BTCUSDT', '0')).toBe(true);
    for (let i = 0; i <= 200; i++) duplicates.first('liquidation', 'ETH-PERP', String(i));
    expect(duplicates.first('liquidation', 'ETH-PERP', '1')).toBe(false);
    expect(duplicates.first('liquidation', 'ETH-PERP', '0')).toBe(true);
  });

  test('RecentIds: bounded per market, oldest forgotten first', () => {
    const ids = new RecentIds(2);
    expect(['a', 'b', 'a', 'c'].map((id) => ids.add('M', id))).toEqual([true, true, false, true]);
    expect(ids.add('N', 'a')).toBe(true);
    expect(ids.add('M', 'a')).toBe(true);
    expect(ids.add('M', 'c')).toBe(false);
  });
});
