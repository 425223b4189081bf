// Markets with a rate of their own (the universe's long tail): they trade on a schedule, are stepped
// only when a trade is due, keep small books, and their assets' prices move only when read.
import { describe, expect, test } from 'vitest';
import { MarketModel, seededRandom } from '../market.ts';
import { TradeSchedule } from '../tradeSchedule.ts';

const windowMs = 100;

/** Steps a listing over `windows` consecutive windows of 100 ms from `start`: how often each market was stepped, and its trades. */
function run(listing: ReturnType<MarketModel['listing']>, windows: number, start = 0) {
  const stepped = new Map<string, number>();
  const trades = new Map<string, { time: number; from: number; to: number }[]>();
  for (let w = 0; w < windows; w++) {
    const from = start + w * windowMs + 1;
    const to = start + (w + 1) * windowMs;
    for (const [m, step] of listing.steps(from, to)) {
      stepped.set(m.symbol, (stepped.get(m.symbol) ?? 0) + 1);
      for (const t of step.trades) (trades.get(m.symbol) ?? trades.set(m.symbol, []).get(m.symbol)!).push({ time: t.time, from, to });
    }
  }
  return { stepped, trades };
}

describe('a market with a rate of its own', () => {
  test('is stepped only in the windows where it trades, at its rate; a uniform market every window', () => {
    const model = new MarketModel(11, { tradesPerSecondPerMarket: 2 });
    model.addAsset('sim:0', { ticker: 'ZORB', name: 'Zorb Network', startPrice: 0.004 });
    const listing = model.listing('v', [
      { symbol: 'ZORBUSDT', base: 'ZORB', asset: 'sim:0', quote: 'USDT', tradesPerSecond: 0.05, levels: 10 },
      { symbol: 'BTCUSDT', base: 'BTC', quote: 'USDT' },
    ]);
    const hour = 36_000;
    const { stepped, trades } = run(listing, hour);
    const tail = trades.get('ZORBUSDT') ?? [];
    // 0.05 a second for an hour: 180 expected, a Poisson count within 5 sigma.
    expect(tail.length).toBeGreaterThan(180 - 5 * Math.sqrt(180));
    expect(tail.length).toBeLessThan(180 + 5 * Math.sqrt(180));
    // Stepped once per window with a trade in it (two trades may share one), never in an idle window.
    expect(stepped.get('ZORBUSDT')).toBe(new Set(tail.map((t) => t.from)).size);
    for (const t of tail) {
      expect(t.time).toBeGreaterThanOrEqual(t.from);
      expect(t.time).toBeLessThanOrEqual(t.to);
    }
    expect(stepped.get('BTCUSDT')).toBe(hour);
    // The uniform market keeps the model's rate: 2 a second.
    expect(trades.get('BTCUSDT')!.length).toBeGreaterThan(7_200 - 5 * Math.sqrt(7_200));
  });

  test('its book has the levels asked for and changes only when it trades', () => {
    const model = new MarketModel(12, { tradesPerSecondPerMarket: 2 });
    model.addAsset('sim:1', { ticker: 'KEMI', name: 'Kemi', startPrice: 25 });
    const listing = model.listing('v', [{ symbol: 'KEMI-USDT', base: 'KEMI', asset: 'sim:1', quote: 'USDT', tradesPerSecond: 0.2, levels: 10 }]);
    const [m] = listing.markets;
    expect(m!.bids.size).toBe(10);
    expect(m!.asks.size).toBe(10);
    let updateId = m!.updateId;
    let moves = 0;
    for (let w = 0; w < 3_000; w++) {
      const stepped = [...listing.steps(w * windowMs + 1, (w + 1) * windowMs)];
      if (stepped.length === 0) expect(m!.updateId).toBe(updateId);
      else {
        expect(stepped[0]![1].trades.length).toBeGreaterThan(0);
        moves += 1;
      }
      updateId = m!.updateId;
      expect(m!.bids.size).toBeLessThanOrEqual(10);
    }
    // 0.2 a second over 300 s: about 60 moves, and far fewer than the 3,000 windows.
    expect(moves).toBeGreaterThan(20);
    expect(moves).toBeLessThan(150);
  });

  test('after a pause its trades are not stamped before the window they are printed in', () => {
    const model = new MarketModel(13, { tradesPerSecondPerMarket: 2 });
    model.addAsset('sim:2', { ticker: 'DAB', name: 'Dabex', startPrice: 60 });
    const listing = model.listing('v', [{ symbol: 'DABUSD', base: 'DAB', asset: 'sim:2', quote: 'USD', tradesPerSecond: 5 }]);
    run(listing, 10);
    // Nothing stepped from 1 s to 60 s (paused), then on again.
    const { trades } = run(listing, 50, 60_000);
    const after = trades.get('DABUSD')!;
    expect(after.length).toBeGreaterThan(0);
    for (const t of after) expect(t.time).toBeGreaterThan(60_000);
  });

  test('a delisted market is stepped no more; one listed later starts trading', () => {
    const model = new MarketModel(14, { tradesPerSecondPerMarket: 2 });
    model.addAsset('sim:3', { ticker: 'FEG', name: 'Feg', startPrice: 14 });
    const listing = model.listing('v', [{ symbol: 'FEGUSDT', base: 'FEG', asset: 'sim:3', quote: 'USDT', tradesPerSecond: 20 }]);
    expect(run(listing, 10).trades.get('FEGUSDT')!.length).toBeGreaterThan(0);
    listing.remove('FEGUSDT');
    expect(listing.bySymbol.has('FEGUSDT')).toBe(false);
    expect(run(listing, 100, 1_000).stepped.size).toBe(0);
    listing.add({ symbol: 'FEGUSDC', base: 'FEG', asset: 'sim:3', quote: 'USDC', tradesPerSecond: 20 });
    expect(listing.bySymbol.get('FEGUSDC')?.symbol).toBe('FEGUSDC');
    expect(run(listing, 10, 20_000).trades.get('FEGUSDC')!.length).toBeGreaterThan(0);
    expect(() => listing.add({ symbol: 'FEGUSDC', base: 'FEG', asset: 'sim:3', quote: 'USDC' })).toThrow(/already lists FEGUSDC/);
  });
});

describe('an asset added to the model', () => {
  test('moves only when read, by the whole time since its last read', () => {
    const model = new MarketModel(15, { tradesPerSecondPerMarket: 2 });
    model.addAsset('sim:4', { ticker: 'TOTE', name: 'Tote', startPrice: 1.22e-8 });
    const btcBefore = model.reference('BTC', 'USD');
    for (let i = 0; i < 100; i++) model.advance(1_000);
    // Every tick moved the catalog's assets and left the added one where it was...
    expect(model.reference('BTC', 'USD')).not.toBe(btcBefore);
    expect(model.assets.get('sim:4')!.mid).toBe(1.22e-8);
    // ...until read: then it has moved over the 100 s.
    const read = model.reference('sim:4', 'USDT');
    expect(read).not.toBe(1.22e-8);
    expect(model.reference('sim:4', 'USDT')).toBe(read);
    expect(Math.abs(Math.log(read / 1.22e-8))).toBeLessThan(0.5);
    expect(model.name('sim:4')).toBe('Tote');
    expect(model.name('BTC')).toBe('Bitcoin');
    expect(() => model.addAsset('sim:4', { ticker: 'X', name: 'X', startPrice: 1 })).toThrow(/exists/);
  });
});

test('the trade schedule gives its entries back by time', () => {
  const random = seededRandom(5);
  const schedule = new TradeSchedule<{ nextTradeAt: number }>();
  const pushed: number[] = [];
  for (let i = 0; i < 2_000; i++) {
    if (random() < 0.6 || schedule.size === 0) {
      const at = Math.floor(random() * 1_000);
      pushed.push(at);
      schedule.push({ nextTradeAt: at });
    } else {
      const first = schedule.peek()!.nextTradeAt;
      expect(schedule.pop()!.nextTradeAt).toBe(first);
      // What comes out is the earliest of what is in.
      expect(first).toBe(Math.min(...pushed));
      pushed.splice(pushed.indexOf(first), 1);
    }
  }
  const rest: number[] = [];
  for (let e = schedule.pop(); e; e = schedule.pop()) rest.push(e.nextTradeAt);
  expect(rest).toEqual([...pushed].sort((a, b) => a - b));
});
