import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { openTestStore } from '../../../test/support/harness.ts';
import { loadUsdRates, usdQuoteParams } from '../usdRates.ts';

const T = Date.parse('2026-03-02T12:00:30Z');
/** The index second both ticks below are for, one minute before T. */
const tickSecond = Date.parse('2026-03-02T11:59:30Z') / 1000;

/** An index row as the index runner writes it, at tickSecond (or `second`). */
const tick = (asset: string, price: number, second = tickSecond) => ({
  asset, second, price, status: 'ok', constituents: ['coinbase:X-USD'], excluded: {},
  volume: 1, volume_usd: price, trade_count: 1, last_trade_at: second * 1000, computed_at: T,
});
/** A bitcoin index second a month before T, with nothing after it for 48 h. */
const oldSecond = Date.parse('2026-02-01T00:00:00Z') / 1000;

let env: Awaited<ReturnType<typeof openTestStore>>;
beforeAll(async () => {
  env = await openTestStore();
  // A zero bitcoin index price (no USD value to invert) next to a usable ethereum one.
  await env.store.insert('index_ticks', [tick('bitcoin', 0), tick('ethereum', 2_000), tick('bitcoin', 50_000, oldSecond)]);
  // The reference table is data from a file: a usd row in it must not move usd off 1 (the eur row
  // of the same day shows such a row is read).
  await env.store.insert('fx_reference_rates', [
    { date: '2026-03-01', currency: 'usd', per_usd: 1.1, source: 'test', imported_at: T },
    { date: '2026-03-01', currency: 'eur', per_usd: 0.9, source: 'test', imported_at: T },
    // CHF dated on T's own day and on the next one.
    { date: '2026-03-01', currency: 'chf', per_usd: 0.8, source: 'test', imported_at: T },
    { date: '2026-03-02', currency: 'chf', per_usd: 0.85, source: 'test', imported_at: T },
    { date: '2026-03-03', currency: 'chf', per_usd: 0.87, source: 'test', imported_at: T },
  ]);
});
afterAll(async () => {
  await env?.dispose();
});

describe('loadUsdRates', () => {
  test('usd is 1 per USD with source usd, whatever the reference table holds', async () => {
    const rates = await loadUsdRates(env.store, T);
    expect(rates.perUsd('usd')).toBe(1);
    expect(rates.source('usd')).toBe('usd');
    expect(rates.perUsd('eur')).toBe(0.9);
    expect(rates.source('eur')).toBe('reference:test 2026-03-01');
  });

  test("a reference rate counts from its own UTC day on, the day's first millisecond included; not before it", async () => {
    const dayStart = Date.parse('2026-03-02T00:00:00Z');
    for (const at of [dayStart, T, dayStart + 86_399_999]) {
      const rates = await loadUsdRates(env.store, at);
      expect(rates.perUsd('chf')).toBe(0.85);
      expect(rates.source('chf')).toBe('reference:test 2026-03-02');
    }
    const dayBefore = await loadUsdRates(env.store, dayStart - 1);
    expect(dayBefore.perUsd('chf')).toBe(0.8);
    expect(dayBefore.source('chf')).toBe('reference:test 2026-03-01');
  });

  test('btc is 1 / the latest index second of the 48 h up to the time asked, that bound included: none past it', async () => {
    const edge = (oldSecond + 2 * 86_400) * 1000;
    const within = await loadUsdRates(env.store, edge + 999);
    expect(within.perUsd('btc')).toBe(1 / 50_000);
    expect(within.source('btc')).toBe('index:bitcoin 2026-02-01T00:00:00Z');
    expect(within.perUsd('eth')).toBeUndefined();
    const past = await loadUsdRates(env.store, edge + 1_000);
    expect(past.perUsd('btc')).toBeUndefined();
    expect(past.source('btc')).toBeUndefined();
  });

  test('btc and eth are 1 / a positive index price only: a zero price gives no rate', async () => {
    const rates = await loadUsdRates(env.store, T);
    expect(rates.perUsd('btc')).toBeUndefined();
    expect(rates.source('btc')).toBeUndefined();
    expect(rates.perUsd('eth')).toBe(1 / 2_000);
    expect(rates.source('eth')).toBe('index:ethereum 2026-03-02T11:59:30Z');
  });
});

describe('usdQuoteParams', () => {
  test('binds the USD quotes and, in the same order, their USD value', () => {
    expect(usdQuoteParams({ USD: 1, USDT: 0.998, USDC: 1.0002 })).toEqual({ usd_quotes: ['USD', 'USDT', 'USDC'], usd_per_quote: [1, 0.998, 1.0002] });
  });
});
