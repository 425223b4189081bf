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
});
