import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { openTestStore } from '../../../test/support/harness.ts';
import { loadUsdRates, usdQuoteParams } from '../usdRates.ts';

const T = Date.parse('2026-03-02T12:00:30Z');
/** The index second both ticks below are for, one minute before T. */
const tickSecond = Date.parse('2026-03-02T11:59:30Z') / 1000;

/** An index row as the index runner writes it, at tickSecond. */
const tick = (asset: string, price: number) => ({
  asset, second: tickSecond, price, status: 'ok', constituents: ['coinbase:X-USD'], excluded: {},
  volume: 1, volume_usd: price, trade_count: 1, last_trade_at: tickSecond * 1000, computed_at: T,
});

let env: Awaited<ReturnType<typeof openTestStore>>;
beforeAll(async () => {
  env = await openTestStore();
  // A zero bitcoin index price (no USD value to invert) next to a usable ethereum one.
  await env.store.insert('index_ticks', [tick('bitcoin', 0), tick('ethereum', 2_000)]);
  // The reference table is data from a file: a usd row in it must not move usd off 1 (the eur row
  // of the same day shows such a row is read).
  await env.store.insert('fx_reference_rates', [
    { date: '2026-03-01', currency: 'usd', per_usd: 1.1, source: 'test', imported_at: T },
    { date: '2026-03-01', currency: 'eur', per_usd: 0.9, source: 'test', imported_at: T },
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
