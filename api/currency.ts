import { z } from 'zod';
import { servedCurrencies, type Currency } from '../infra/currency/currencies.ts';
import { loadUsdRates, type UsdRates } from '../infra/currency/usdRates.ts';
import type { Store } from '../infra/store.ts';
import { ApiError } from './errors.ts';

// The HTTP side of currencies: the `vs` parameter and the 503 for a rate we do not know. The
// currencies and their rates live in infra/currency/.

/** The `vs` query parameter shared by the coin endpoints. */
export const vsParam = z
  .enum(servedCurrencies, { error: `must be one of ${servedCurrencies.join(', ')}` })
  .default('usd')
  .describe('quote currency; USD figures are multiplied by the rate returned in `rate` (methodology: aggregate/METHODOLOGY.md, "FX and currencies")');

/** Currency keys of the value maps (spec 2.2): /v1/coins/{id} and /v1/global. */
export const valueCurrencies = ['usd', 'ars', 'brl', 'sek'] as const satisfies readonly Currency[];
export type ValueCurrency = (typeof valueCurrencies)[number];

/** The rate an endpoint applies for `vs`; 503 unavailable naming the currency when none is known. */
export function rateFor(rates: UsdRates, vs: Currency): { rate: number; source: string } {
  const rate = rates.perUsd(vs);
  const source = rates.source(vs);
  if (rate === undefined || source === undefined) {
    throw new ApiError(503, 'unavailable', `no exchange rate for vs=${vs} is known at the moment; retry later, or ask for another currency (usd is always served)`);
  }
  return { rate, source };
}

/** The rate for `vs` at `at`: usd needs no lookup. */
export async function loadRate(store: Store, vs: Currency, at: number): Promise<{ rate: number; source: string }> {
  if (vs === 'usd') return { rate: 1, source: 'usd' };
  return rateFor(await loadUsdRates(store, at), vs);
}
