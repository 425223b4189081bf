import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { openTestStore, trade, type TradeRow } from '../../../test/support/harness.ts';
import { loadMeasuredFiatRates, loadStablecoinRates } from '../fxMeasured.ts';

// Rates measured at T from trades stored in the minutes before it (the default one-hour window,
// at least 3 observations). Every expected rate below is worked out by hand from the trades.
// Five venues per rate: the store returns them in no alphabetical order, so the order in a source is the code's.

const minute = 60_000;
const T = Date.parse('2026-03-02T12:00:30Z');
/** The start of the i-th minute before T's own (0: T's minute), plus 10 s: a trade inside it. */
const inMinute = (i: number) => Date.parse('2026-03-02T12:00:10Z') - i * minute;

/** T, `day` days later. */
const D = (day: number) => T + day * 86_400_000;
/** A trade inside the i-th minute before D(day)'s own. */
const onDay = (day: number, i: number) => inMinute(i) + day * 86_400_000;

let tradeSeq = 0;
function at(ts: number, venue: string, asset: string, quote: string, price: number, quantity: number): TradeRow {
  return trade({ venue, market: `${asset}-${quote}`, asset, quote, trade_id: String(tradeSeq++), ts, price, quantity });
}

/** One minute in which a venue traded bitcoin against USD and against `currency`. */
function crossMinute(i: number, venue: string, currency: string, usd: { price: number; quantity: number }, fiat: { price: number; quantity: number }): TradeRow[] {
  return [at(inMinute(i), venue, 'bitcoin', 'USD', usd.price, usd.quantity), at(inMinute(i) + 1_000, venue, 'bitcoin', currency, fiat.price, fiat.quantity)];
}

const trades: TradeRow[] = [
  // CHF: kraken in exactly three minutes (the minimum), at 0.80, 0.90 and 0.85 CHF per USD; each
  // weighs min(100 000 USD, 0.5 BTC * 100 000) = 50 000, so the median is the middle one, 0.85.
  ...crossMinute(0, 'kraken', 'CHF', { price: 100_000, quantity: 1 }, { price: 80_000, quantity: 0.5 }),
  ...crossMinute(1, 'kraken', 'CHF', { price: 100_000, quantity: 1 }, { price: 90_000, quantity: 0.5 }),
  ...crossMinute(2, 'kraken', 'CHF', { price: 100_000, quantity: 1 }, { price: 85_000, quantity: 0.5 }),
  // EUR: five venues, one minute each. Weights 50 000 each but gemini's 150 000 (1.5 BTC on both
  // legs); sorted 0.90, 0.91, 0.92, 0.93, 0.94, total 350 000, half 175 000: the running sum
  // (50, 100, 150, 200 thousand) first reaches it at coinbase's 0.93.
  ...crossMinute(3, 'okx', 'EUR', { price: 100_000, quantity: 1 }, { price: 92_000, quantity: 0.5 }),
  ...crossMinute(4, 'kraken', 'EUR', { price: 100_000, quantity: 1 }, { price: 91_000, quantity: 0.5 }),
  ...crossMinute(5, 'bitstamp', 'EUR', { price: 100_000, quantity: 1 }, { price: 90_000, quantity: 0.5 }),
  ...crossMinute(6, 'coinbase', 'EUR', { price: 100_000, quantity: 1 }, { price: 93_000, quantity: 0.5 }),
  ...crossMinute(7, 'gemini', 'EUR', { price: 100_000, quantity: 1.5 }, { price: 94_000, quantity: 1.5 }),

  // USDT/USD on five venues, one minute each: 8 999 USD for 9 000 USDT.
  at(inMinute(0), 'okx', 'tether', 'USD', 1.001, 1_000),
  at(inMinute(1), 'kraken', 'tether', 'USD', 0.999, 3_000),
  at(inMinute(2), 'bitstamp', 'tether', 'USD', 1, 2_000),
  at(inMinute(3), 'coinbase', 'tether', 'USD', 1.002, 1_000),
  at(inMinute(4), 'gemini', 'tether', 'USD', 0.9995, 2_000),
  // USDC/USD on coinbase in exactly three minutes (the minimum): 10 000.8 USD for 10 000 USDC.
  at(inMinute(0), 'coinbase', 'usd-coin', 'USD', 1.0001, 4_000),
  at(inMinute(1), 'coinbase', 'usd-coin', 'USD', 0.9999, 4_000),
  at(inMinute(2), 'coinbase', 'usd-coin', 'USD', 1.0004, 2_000),

  // JPY: two observations (kraken in two minutes), one fewer than the minimum.
  ...crossMinute(8, 'kraken', 'JPY', { price: 100_000, quantity: 1 }, { price: 15_000_000, quantity: 0.5 }),
  ...crossMinute(9, 'kraken', 'JPY', { price: 100_000, quantity: 1 }, { price: 15_100_000, quantity: 0.5 }),

  // USDC/USD in 1, 2 and 3 traded minutes, each on a day of its own (read at that day's D below):
  // day 1, three venues in one and the same minute; day 2, two minutes; day 3, three minutes, where
  // 1.0002 x 1 000 + 0.9998 x 3 000 + 1.0001 x 2 000 = 5 999.8 USD for 6 000 USDC.
  at(onDay(1, 0), 'coinbase', 'usd-coin', 'USD', 1.01, 1_000),
  at(onDay(1, 0) + 1_000, 'kraken', 'usd-coin', 'USD', 1.01, 1_000),
  at(onDay(1, 0) + 2_000, 'bitstamp', 'usd-coin', 'USD', 1.01, 1_000),
  at(onDay(2, 0), 'coinbase', 'usd-coin', 'USD', 1.01, 1_000),
  at(onDay(2, 1), 'kraken', 'usd-coin', 'USD', 1.01, 1_000),
  at(onDay(3, 0), 'coinbase', 'usd-coin', 'USD', 1.0002, 1_000),
  at(onDay(3, 1), 'kraken', 'usd-coin', 'USD', 0.9998, 3_000),
  at(onDay(3, 2), 'bitstamp', 'usd-coin', 'USD', 1.0001, 2_000),
];

let env: Awaited<ReturnType<typeof openTestStore>>;
beforeAll(async () => {
  env = await openTestStore();
  await env.store.insert('trades', trades);
});
afterAll(async () => {
  await env?.dispose();
});

describe('loadMeasuredFiatRates', () => {
  test('one rate per asked currency with enough observations, never one for USD itself', async () => {
    const rates = await loadMeasuredFiatRates(env.store, T, ['EUR', 'CHF']);
    expect([...rates.keys()].sort()).toEqual(['CHF', 'EUR']);
  });

  test('exactly the minimum number of observations is enough', async () => {
    const rates = await loadMeasuredFiatRates(env.store, T, ['CHF']);
    expect(rates.get('CHF')?.perUsd).toBeCloseTo(0.85, 12);
    expect(rates.get('CHF')?.source).toBe('measured:kraken CHF/USD cross, 3 min');
  });

  test('two observations are not enough: no measured rate', async () => {
    const rates = await loadMeasuredFiatRates(env.store, T, ['JPY', 'CHF']);
    expect([...rates.keys()]).toEqual(['CHF']);
  });

  test('the weighted median of the venues, named in alphabetical order', async () => {
    const rates = await loadMeasuredFiatRates(env.store, T, ['EUR']);
    expect(rates.get('EUR')?.perUsd).toBeCloseTo(0.93, 12);
    expect(rates.get('EUR')?.source).toBe('measured:bitstamp,coinbase,gemini,kraken,okx EUR/USD cross, 5 min');
  });
});

describe('loadStablecoinRates', () => {
  test('the VWAP of every USD market of the coin, its venues named in alphabetical order', async () => {
    const rates = await loadStablecoinRates(env.store, T);
    expect(rates.tether.usdPer).toBeCloseTo(8_999 / 9_000, 12);
    expect(rates.tether.source).toBe('measured:bitstamp,coinbase,gemini,kraken,okx USDT/USD');
  });

  test('exactly the minimum number of minutes is enough', async () => {
    const rates = await loadStablecoinRates(env.store, T);
    expect(rates['usd-coin'].usdPer).toBeCloseTo(1.00008, 12);
    expect(rates['usd-coin'].source).toBe('measured:coinbase USDC/USD');
  });

  test('traded in one minute (on three venues) or in two: at par; in three: measured', async () => {
    expect((await loadStablecoinRates(env.store, D(1)))['usd-coin']).toEqual({ usdPer: 1, source: 'par' });
    expect((await loadStablecoinRates(env.store, D(2)))['usd-coin']).toEqual({ usdPer: 1, source: 'par' });
    const three = (await loadStablecoinRates(env.store, D(3)))['usd-coin'];
    expect(three.usdPer).toBeCloseTo(5_999.8 / 6_000, 12);
    expect(three.source).toBe('measured:bitstamp,coinbase,kraken USDC/USD');
  });
});
