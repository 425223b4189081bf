import { describe, expect, test } from 'vitest';
import type { Currency } from '../currency/currencies.ts';
import { assetOrder, quoteRate, type QuoteRates } from '../indexQuoteRate.ts';

// Rates as loadUsdRates serves them (units per USD; btc and eth as 1 / their index price), written
// out by hand so every expected value below is plain arithmetic.
const perUsd: Partial<Record<Currency, number>> = { usd: 1, eur: 0.8, gbp: 0, jpy: -150, btc: 1 / 50_000, eth: 1 / 2_500 };
const rates: QuoteRates = {
  stablecoins: { tether: { usdPer: 0.998, source: 'measured:test USDT/USD' }, 'usd-coin': { usdPer: 1.002, source: 'measured:test USDC/USD' } },
  fiat: { perUsd: (c) => perUsd[c], source: () => 'test' },
};
const indexNow = new Map([['bitcoin', 60_000], ['ethereum', 3_000]]);

describe('quoteRate (USD per unit of the quote)', () => {
  test('USD is 1; USDT and USDC at their measured rates', () => {
    expect(quoteRate('USD', 'solana', rates, indexNow)).toBe(1);
    expect(quoteRate('USDT', 'solana', rates, indexNow)).toBe(0.998);
    expect(quoteRate('USDC', 'solana', rates, indexNow)).toBe(1.002);
  });

  test('fiat through FX, inverted; a rate of 0 or below, or none, is no rate', () => {
    expect(quoteRate('EUR', 'bitcoin', rates, indexNow)).toBe(1.25);
    expect(quoteRate('GBP', 'bitcoin', rates, indexNow)).toBeUndefined();
    expect(quoteRate('JPY', 'bitcoin', rates, indexNow)).toBeUndefined();
    expect(quoteRate('CHF', 'bitcoin', rates, indexNow)).toBeUndefined();
  });

  test("BTC and ETH quotes through this second's index, never the FX table; not for bitcoin and ethereum themselves", () => {
    expect(quoteRate('BTC', 'solana', rates, indexNow)).toBe(60_000);
    expect(quoteRate('ETH', 'solana', rates, indexNow)).toBe(3_000);
    expect(quoteRate('BTC', 'ethereum', rates, indexNow)).toBeUndefined();
    expect(quoteRate('ETH', 'bitcoin', rates, indexNow)).toBeUndefined();
    expect(quoteRate('BTC', 'solana', rates, new Map())).toBeUndefined();
  });

  test('a quote that is no served fiat currency has no rate, even one the FX table knows (btc there is for responses)', () => {
    expect(quoteRate('btc', 'solana', rates, indexNow)).toBeUndefined();
    expect(quoteRate('XAU', 'solana', rates, indexNow)).toBeUndefined();
  });
});

test('assetOrder: bitcoin, then ethereum, then the others by id', () => {
  expect(['solana', 'ethereum', 'aave', 'bitcoin', 'cardano'].sort(assetOrder)).toEqual(['bitcoin', 'ethereum', 'aave', 'cardano', 'solana']);
  expect(Math.sign(assetOrder('aave', 'solana'))).toBe(-1);
  expect(Math.sign(assetOrder('solana', 'aave'))).toBe(1);
  expect(Math.sign(assetOrder('ethereum', 'aave'))).toBe(-1);
  expect(Math.sign(assetOrder('ethereum', 'bitcoin'))).toBe(1);
  expect(assetOrder('aave', 'aave')).toBe(0);
});
