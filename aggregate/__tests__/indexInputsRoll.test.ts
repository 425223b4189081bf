import { describe, expect, it } from 'vitest';
import { indexParamsSchema } from '../indexPrice.ts';
import { rollLastTrades, rollWindows } from '../indexInputs.ts';
import type { BucketRow, SecondRow, WindowRow } from '../indexSweep.ts';

// Rolling a minute's kept inputs to the next minute (LiveInputs), on figures worked by hand.

const at = (hhmmss: string) => Date.parse(`2026-03-02T${hhmmss}Z`) / 1000;
const market = (venue: string) => ({ asset: 'rollcoin', venue, market: 'ROLLUSD', quote: 'USD' });
// Windows of 3 minutes (volume) and 2 (interval).
const params = indexParamsSchema.parse({ volumeWindowMinutes: 3, intervalWindowMinutes: 2 });

describe('rollWindows', () => {
  it('adds the candle of the minute that ended, takes off those leaving each window, drops a market left with none', () => {
    // At 12:03, x's candles 12:00 (2 trades, 200), 12:01 (1, 100), 12:02 (3, 300, close 99) are in
    // the volume window, 12:01 and 12:02 in the interval window; y traded once, at 12:00.
    const windows: WindowRow[] = [
      { ...market('x'), windowNotional: 600, windowTrades: 6, intervalTrades: 4, close: 99 },
      { ...market('y'), windowNotional: 10, windowTrades: 1, intervalTrades: 0, close: 10 },
    ];
    const candle = (venue: string, hhmm: string, trades: number, notional: number, close: number): BucketRow => ({ ...market(venue), bucket: at(`${hhmm}:00`), trades, notional, close });
    // What bucketsSql reads from 12:03 to 12:04: 12:03 enters, 12:00 leaves the volume window, 12:01 the interval window.
    const buckets = [candle('x', '12:03', 1, 50, 101), candle('x', '12:00', 2, 200, 98), candle('x', '12:01', 1, 100, 97), candle('y', '12:00', 1, 10, 10), candle('z', '12:03', 4, 40, 11)];

    const rolled = rollWindows(windows, buckets, at('12:04:00'), params);
    expect(rolled).toEqual([
      // 6 + 1 - 2 trades, 600 + 50 - 200; interval 4 + 1 - 1; the close of 12:03.
      { ...market('x'), windowNotional: 450, windowTrades: 5, intervalTrades: 4, close: 101 },
      // y's only candle left: no row, as windowsSql's HAVING leaves none. z is new.
      { ...market('z'), windowNotional: 40, windowTrades: 4, intervalTrades: 4, close: 11 },
    ]);
    // The rows kept are not changed.
    expect(windows[0]).toEqual({ ...market('x'), windowNotional: 600, windowTrades: 6, intervalTrades: 4, close: 99 });
  });
});

describe('rollLastTrades', () => {
  // A look-back of 40 s: before 12:03, it spans 12:02:20 to 12:03; before 12:04, 12:03:20 to 12:04.
  const second = (venue: string, hhmmss: string, trades: number, price: number): SecondRow => ({ ...market(venue), second: at(hhmmss), trades, price, lastTradeAt: at(hhmmss) * 1000 + 500, notional: price * trades, volume: trades });

  it("takes the minute's seconds and the trades that left the look-back: the last trade and the count of what is left", () => {
    const atMinute = [
      { ...market('x'), price: 5, lastTradeAt: at('12:02:50') * 1000, trades: 3 },
      { ...market('y'), price: 6, lastTradeAt: at('12:02:30') * 1000, trades: 1 },
    ];
    // Seconds of the minute 12:03, and one of 12:04 (the step before reached into it): not counted.
    const seconds = [second('x', '12:03:10', 2, 6), second('x', '12:03:40', 1, 7), second('w', '12:03:50', 1, 8), second('x', '12:04:01', 9, 9)];
    // From 12:02:20 to 12:03:20: x's 3 trades before 12:03 and 2 of 12:03:10; y's one.
    const left = [{ ...market('x'), trades: 5 }, { ...market('y'), trades: 1 }];

    expect(rollLastTrades(atMinute, seconds, left, at('12:04:00'))).toEqual([
      { ...market('x'), price: 7, lastTradeAt: at('12:03:40') * 1000 + 500, trades: 1 },
      { ...market('w'), price: 8, lastTradeAt: at('12:03:50') * 1000 + 500, trades: 1 },
    ]);
    expect(atMinute[0]!.trades).toBe(3);
  });

  it('is undefined when trades left the look-back of a market it did not hold: what was kept no longer matches the store', () => {
    expect(rollLastTrades([], [], [{ ...market('v'), trades: 1 }], at('12:04:00'))).toBeUndefined();
  });
});
