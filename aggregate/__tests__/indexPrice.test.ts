import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../infra/config.ts';
import { computeIndexSecond, defaultIndexParams, meanTradeIntervalMs, staleAfterMs, staleLookbackMs, type MarketInput, type PreviousIndex } from '../indexPrice.ts';
import { defaultIndexSchedule, indexSettingsFromConfig } from '../indexRunner.ts';

// The rules one at a time, on hand-made inputs; indexRunner.store.test.ts checks the whole engine
// against an independent recomputation from raw trades.

const S = 1_767_225_600; // a second; its end is (S + 1) * 1000
const end = (S + 1) * 1000;
const params = defaultIndexParams;

function market(venue: string, fields: Partial<MarketInput> = {}): MarketInput {
  return {
    venue,
    market: 'XUSD',
    quote: 'USD',
    contract: 'spot',
    usdPerQuote: 1,
    lastPrice: 100,
    lastTradeAt: end - 500,
    windowNotional: 1_000_000,
    meanIntervalMs: 1_000,
    crossed: false,
    disconnected: false,
    inSecond: { notional: 0, volume: 0, trades: 0 },
    ...fields,
  };
}

const reasons = (r: ReturnType<typeof computeIndexSecond>) => Object.fromEntries(r.markets.map((m) => [m.venue, m.reason]));

describe('computeIndexSecond', () => {
  it('weights each included market by its trailing USD volume', () => {
    const r = computeIndexSecond(
      S,
      [
        market('a', { lastPrice: 100, windowNotional: 3_000_000, inSecond: { notional: 200, volume: 2, trades: 1 } }),
        market('b', { lastPrice: 101, windowNotional: 1_000_000 }),
        // USDT at 0.999 USD: both its price and its volume are converted.
        market('c', { quote: 'USDT', usdPerQuote: 0.999, lastPrice: 100.5, windowNotional: 2_000_000, inSecond: { notional: 100.5, volume: 1, trades: 1 } }),
      ],
      undefined,
      params,
    );
    const w = [3_000_000, 1_000_000, 2_000_000 * 0.999];
    const p = [100, 101, 100.5 * 0.999];
    expect(r.status).toBe('ok');
    expect(r.price).toBeCloseTo((w[0]! * p[0]! + w[1]! * p[1]! + w[2]! * p[2]!) / (w[0]! + w[1]! + w[2]!), 10);
    expect(r.markets.map((m) => m.weight)).toEqual(w.map((x) => x / (w[0]! + w[1]! + w[2]!)));
    expect(r).toMatchObject({ volume: 3, tradeCount: 2, lastTradeAt: end - 500 });
    expect(r.volumeUsd).toBeCloseTo(200 + 100.5 * 0.999, 10);
  });

  it('stale: older than 1 min and (older than 10 min or than 100 mean intervals)', () => {
    const r = computeIndexSecond(
      S,
      [
        market('a'),
        market('b'),
        // 61 s old at 0.5 s between trades (limit max(1 min, 50 s)): stale.
        market('busy', { lastTradeAt: end - 61_000, meanIntervalMs: 500 }),
        // 59 s old at 0.1 s between trades: the 1-minute floor keeps it in.
        market('floor', { lastTradeAt: end - 59_000, meanIntervalMs: 100 }),
        // 9 min old at 10 s between trades (limit 1000 s, capped at 10 min): in.
        market('slow', { lastTradeAt: end - 540_000, meanIntervalMs: 10_000 }),
        // 10 min + 1 ms old, whatever its rate: stale; and no trade in the interval window at all.
        market('ceiling', { lastTradeAt: end - 600_001, meanIntervalMs: Infinity }),
        // Older than the look-back (the runner knows no time): stale.
        market('unknown', { lastTradeAt: null }),
      ],
      undefined,
      params,
    );
    expect(reasons(r)).toEqual({ a: null, b: null, busy: 'stale', floor: null, slow: null, ceiling: 'stale', unknown: 'stale' });
  });

  it('disconnected, crossed_book, low_share (below 1 % of the candidates with a USD rate), no_usd_rate, perpetual', () => {
    const r = computeIndexSecond(
      S,
      [
        market('a', { windowNotional: 500_000 }),
        market('b', { windowNotional: 480_000 }),
        market('crossed', { crossed: true, windowNotional: 10_000 }),
        // 9,999 / 1,000,000 of the rated volume: below 1 %.
        market('thin', { windowNotional: 9_999 }),
        market('eur', { quote: 'EUR', usdPerQuote: undefined, windowNotional: 5_000_000 }),
        market('perp', { contract: 'perpetual', windowNotional: 5_000_000 }),
        market('stale-big', { lastTradeAt: end - 700_000, windowNotional: 1 }),
        // Its collector says the socket is down: out before the stale rule looks at its last trade.
        market('down', { disconnected: true, lastTradeAt: end - 700_000, windowNotional: 1 }),
      ],
      undefined,
      params,
    );
    expect(reasons(r)).toEqual({ a: null, b: null, crossed: 'crossed_book', thin: 'low_share', eur: 'no_usd_rate', perp: 'perpetual', 'stale-big': 'stale', down: 'disconnected' });
    expect(r.markets.find((m) => m.venue === 'eur')).toMatchObject({ priceUsd: null, volume24hUsd: 0, weight: 0 });
    // Perpetuals count once configured.
    const withPerps = computeIndexSecond(S, [market('a'), market('perp', { contract: 'perpetual' })], undefined, { ...params, includePerpetuals: true });
    expect(reasons(withPerps)).toEqual({ a: null, perp: null });
  });

  it('a market that breaks several rules is left out for the first in order; the outlier median is over the markets still in', () => {
    const r = computeIndexSecond(
      S,
      [
        market('a', { lastPrice: 100 }),
        market('b', { lastPrice: 100.4 }),
        market('c', { lastPrice: 100.8 }),
        // perpetual comes before no_usd_rate.
        market('perp', { contract: 'perpetual', quote: 'GBP', usdPerQuote: undefined }),
        // disconnected before stale, stale before crossed_book, crossed_book before low_share (its 100 USD is 0.002 % of the volume).
        market('down-stale', { disconnected: true, lastTradeAt: end - 700_000, crossed: true, lastPrice: 120 }),
        market('stale-crossed', { lastTradeAt: end - 700_000, crossed: true, lastPrice: 120 }),
        market('crossed-thin', { crossed: true, windowNotional: 100, lastPrice: 120 }),
        // 3.08 % above the median of a, b, c and itself (100.6): out. Against the median of every market
        // with a USD rate (102.25, with the three at 120) it would be 1.42 % off, and in.
        market('far', { lastPrice: 103.7 }),
      ],
      undefined,
      params,
    );
    expect(reasons(r)).toEqual({ a: null, b: null, c: null, perp: 'perpetual', 'down-stale': 'disconnected', 'stale-crossed': 'stale', 'crossed-thin': 'crossed_book', far: 'outlier' });
    expect(r.price).toBeCloseTo((100 + 100.4 + 100.8) / 3, 10);
    expect(r.status).toBe('ok');
  });

  it('outlier above 3 % of the median, re-admitted only below 1.5 % (hysteresis on the previous second)', () => {
    const inputs = (far: number) => [market('a', { lastPrice: 100 }), market('b', { lastPrice: 100.2 }), market('c', { lastPrice: 99.9 }), market('far', { lastPrice: far })];
    const outliers = (r: ReturnType<typeof computeIndexSecond>) => new Set(r.markets.filter((m) => m.reason === 'outlier').map((m) => `${m.venue}:${m.market}`));
    const prev = (r: ReturnType<typeof computeIndexSecond>): PreviousIndex => ({ price: r.price!, lastTradeAt: r.lastTradeAt!, outliers: outliers(r) });

    // Median of (99.9, 100, 100.2, far) = 100.1 while far is above 100.2.
    const in1 = computeIndexSecond(S, inputs(103.1), undefined, params); // +2.997 %: in
    expect(reasons(in1).far).toBeNull();
    const out = computeIndexSecond(S + 1, inputs(103.2), prev(in1), params); // +3.097 %: out
    expect(reasons(out).far).toBe('outlier');
    expect(out.price).toBeCloseTo((100 + 100.2 + 99.9) / 3, 10);
    const stillOut = computeIndexSecond(S + 2, inputs(101.7), prev(out), params); // +1.598 %: stays out
    expect(reasons(stillOut).far).toBe('outlier');
    const back = computeIndexSecond(S + 3, inputs(101.6), prev(stillOut), params); // +1.499 %: back in
    expect(reasons(back).far).toBeNull();
    // Without the memory, 1.6 % is no outlier.
    expect(reasons(computeIndexSecond(S + 2, inputs(101.7), undefined, params)).far).toBeNull();
  });

  it('fails closed when fewer than 2 healthy venues remain, carrying the previous price and its trade time', () => {
    const previous: PreviousIndex = { price: 123.45, lastTradeAt: end - 30_000, outliers: new Set() };
    const r = computeIndexSecond(S, [market('a'), market('b', { lastTradeAt: end - 700_000 })], previous, params);
    expect(r).toMatchObject({ status: 'fail_closed', price: 123.45, lastTradeAt: end - 30_000, volume: 0, tradeCount: 0 });
    expect(r.markets.map((m) => m.weight)).toEqual([0, 0]);
    // Two markets of one healthy venue are still one venue.
    const oneVenue = computeIndexSecond(S, [market('a'), { ...market('a'), market: 'XUSDT', quote: 'USDT' }, market('b', { crossed: true })], previous, params);
    expect(oneVenue.status).toBe('fail_closed');
    // Nothing to carry: nothing published.
    expect(computeIndexSecond(S, [market('a'), market('b', { lastTradeAt: null })], undefined, params).price).toBeUndefined();
    // A third venue requirement is met by 3 healthy venues only.
    const three = [market('a'), market('b'), market('c')];
    expect(computeIndexSecond(S, three, previous, { ...params, minHealthyVenues: 3 }).status).toBe('ok');
    expect(computeIndexSecond(S, [...three.slice(0, 2), market('c', { crossed: true })], previous, { ...params, minHealthyVenues: 3 }).status).toBe('fail_closed');
  });

  it('an asset on a single eligible venue uses it, flagged single_venue; a low-share second venue does not count', () => {
    const r = computeIndexSecond(S, [market('a', { lastPrice: 100 }), { ...market('a', { lastPrice: 101 }), market: 'XUSDT' }, market('tiny', { windowNotional: 100 })], undefined, params);
    expect(r.status).toBe('single_venue');
    expect(r.price).toBe(100.5);
    expect(reasons(r).tiny).toBe('low_share');
    // Its only venue stale: fail closed.
    expect(computeIndexSecond(S, [market('a', { lastTradeAt: null })], undefined, params)).toMatchObject({ status: 'fail_closed', price: undefined });
  });
});

describe('computeIndexSecond at the exact edge of each rule', () => {
  // Parameters whose edges are exact in binary floating point, so "at the limit" is exactly at it.
  const exact = { ...params, outlierThreshold: 0.25, outlierReadmitFraction: 0.5, minShare: 0.25 };

  it('stale: a trade exactly the limit old is in, 1 ms older is out (100 intervals of 1 s = 100 s)', () => {
    const r = computeIndexSecond(S, [market('a'), market('b'), market('at', { lastTradeAt: end - 100_000 }), market('past', { lastTradeAt: end - 100_001 })], undefined, exact);
    expect(reasons(r)).toEqual({ a: null, b: null, at: null, past: 'stale' });
  });

  it('low_share: exactly minShare of the volume is in, below it is out', () => {
    // Volumes 2, 1, 1 of 4: 25 % each for the two small ones.
    const atLimit = computeIndexSecond(S, [market('a', { windowNotional: 2 }), market('b', { windowNotional: 1 }), market('c', { windowNotional: 1 })], undefined, exact);
    expect(reasons(atLimit)).toEqual({ a: null, b: null, c: null });
    expect(atLimit.markets.map((m) => m.weight)).toEqual([0.5, 0.25, 0.25]);
    // 1 of 5: 20 %.
    const below = computeIndexSecond(S, [market('a', { windowNotional: 3 }), market('b', { windowNotional: 1 }), market('c', { windowNotional: 1 })], undefined, exact);
    expect(reasons(below)).toEqual({ a: null, b: 'low_share', c: 'low_share' });
    expect(below.status).toBe('single_venue');
  });

  it('outlier: exactly the threshold off the median is in; a past outlier exactly at the re-admission limit stays out', () => {
    // Median of (100, 100, 125) = 100: 125 is exactly 25 % off.
    const inputs = (far: number) => [market('a', { lastPrice: 100 }), market('b', { lastPrice: 100 }), market('far', { lastPrice: far })];
    expect(reasons(computeIndexSecond(S, inputs(125), undefined, exact)).far).toBeNull();
    expect(reasons(computeIndexSecond(S, inputs(125.5), undefined, exact)).far).toBe('outlier');
    const wasOut: PreviousIndex = { price: 100, lastTradeAt: end - 1_000, outliers: new Set(['far:XUSD']) };
    // Re-admitted below 12.5 % only.
    expect(reasons(computeIndexSecond(S, inputs(112.5), wasOut, exact)).far).toBe('outlier');
    expect(reasons(computeIndexSecond(S, inputs(112.25), wasOut, exact)).far).toBeNull();
    // The memory is per market: another market's past does not tighten this one's limit.
    const otherWasOut: PreviousIndex = { ...wasOut, outliers: new Set(['a:XUSD']) };
    expect(reasons(computeIndexSecond(S, inputs(112.5), otherWasOut, exact)).far).toBeNull();
  });

  it('needs min(minHealthyVenues, eligible venues) healthy venues; no window volume at all fails closed', () => {
    // Two eligible venues and a requirement of 3: both healthy is enough.
    const two = computeIndexSecond(S, [market('a', { lastPrice: 100 }), market('b', { lastPrice: 102 })], undefined, { ...params, minHealthyVenues: 3 });
    expect(two).toMatchObject({ status: 'ok', price: 101 });
    // Healthy markets with no traded value in the window have nothing to weight.
    const noVolume = computeIndexSecond(S, [market('a', { windowNotional: 0 }), market('b', { windowNotional: 0 })], undefined, params);
    expect(noVolume).toMatchObject({ status: 'fail_closed', price: undefined, lastTradeAt: undefined });
    expect(reasons(noVolume)).toEqual({ a: null, b: null });
  });

  it('the price carries the latest trade of the included markets and their second\'s volumes, converted to USD', () => {
    const r = computeIndexSecond(
      S,
      [
        market('a', { lastTradeAt: end - 900, inSecond: { notional: 300, volume: 3, trades: 2 } }),
        market('b', { quote: 'EUR', usdPerQuote: 2, lastPrice: 50, lastTradeAt: end - 100, inSecond: { notional: 50, volume: 1, trades: 1 } }),
        // Excluded: its trades do not count.
        market('c', { crossed: true, lastTradeAt: end - 10, inSecond: { notional: 1_000, volume: 10, trades: 7 } }),
      ],
      undefined,
      params,
    );
    expect(r).toMatchObject({ status: 'ok', price: 100, lastTradeAt: end - 100, volume: 4, volumeUsd: 400, tradeCount: 3 });
    expect(r.markets[1]).toEqual({ venue: 'b', market: 'XUSD', quote: 'EUR', priceUsd: 100, volume24hUsd: 2_000_000, weight: 2 / 3, reason: null });
  });
});

describe('stale age and trade interval', () => {
  it('staleAfterMs: the floor, N intervals in between, the ceiling; meanTradeIntervalMs over the window; the look-back is the larger bound', () => {
    expect(staleAfterMs(100, params)).toBe(60_000);
    expect(staleAfterMs(1_000, params)).toBe(100_000);
    expect(staleAfterMs(Infinity, params)).toBe(600_000);
    expect(meanTradeIntervalMs(60, params)).toBe(60_000);
    expect(meanTradeIntervalMs(0, params)).toBe(Infinity);
    expect(meanTradeIntervalMs(1, { ...params, intervalWindowMinutes: 2 })).toBe(120_000);
    expect(staleLookbackMs(params)).toBe(600_000);
    expect(staleLookbackMs({ ...params, staleMinMs: 700_000 })).toBe(700_000);
  });
});

describe('configuration', () => {
  it('the environment defaults are the engine defaults, converted from percent and hours', () => {
    const settings = indexSettingsFromConfig(loadConfig({}));
    expect(settings.params).toEqual(defaultIndexParams);
    expect(settings.schedule).toEqual(defaultIndexSchedule);
    expect(indexSettingsFromConfig(loadConfig({ INDEX_OUTLIER_PCT: '5', INDEX_PERPETUALS: 'true', INDEX_BACKFILL_HOURS: '2' }))).toMatchObject({
      params: { outlierThreshold: 0.05, includePerpetuals: true },
      schedule: { backfillMs: 7_200_000 },
    });
    expect(() => loadConfig({ INDEX_OUTLIER_PCT: '-1' })).toThrow(/INDEX_OUTLIER_PCT/);
  });
});
