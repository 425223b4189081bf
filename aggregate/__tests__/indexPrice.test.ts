import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../infra/config.ts';
import { computeIndexSecond, defaultIndexParams, type MarketInput, type PreviousIndex } from '../indexPrice.ts';
import { defaultIndexSchedule, indexSettingsFromConfig } from '../indexRunner.ts';

// The rules one at a time, on hand-made inputs; indexRunner.test.ts checks the whole engine
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
