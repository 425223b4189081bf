import { z } from 'zod';
import { servedCurrencies, type Currency } from '../aggregate/currency/currencies.ts';
import { loadUsdRates, type UsdRates } from '../aggregate/currency/usdRates.ts';
import type { StoreCalls } from '../infra/store.ts';
import { ApiError } from './errors.ts';

// The HTTP side of currencies: the `vs` parameter and the 503 for a rate we do not know. The
// currencies and their rates live in aggregate/currency/.

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
export async function loadRate(store: StoreCalls, vs: Currency, at: number): Promise<{ rate: number; source: string }> {
  if (vs === 'usd') return { rate: 1, source: 'usd' };
  return rateFor(await loadUsdRates(store, at), vs);
}

/** `rates` of a converted history (ohlc, chart): each rate applied, from the first bucket it applies to. */
export const rateRunsSchema = z
  .array(
    z.object({
      since: z.number().int().describe('unix ms: start of the first bucket converted at this rate; it applies up to the next entry'),
      rate: z.number().describe('units of the served currency per 1 USD'),
      source: z.string().describe('measured:<venues> <CUR>/USD cross in the bucket, reference:<publisher> <date> (the daily rate of that day), or index:<asset> close <time>'),
    }),
  )
  .optional()
  .describe(
    'present when vs is not usd: every bucket is converted at the rate of its own time (measured within the bucket when venues traded the currency against USD, else the reference rate of its UTC day; btc and eth: 1 / that bucket\'s index close), listed here oldest first, one entry per run of buckets sharing a rate. Buckets before the first known rate are left out',
  );
export type RateRun = { since: number; rate: number; source: string };

/** The runs of equal rate and source in buckets listed oldest first: what a response lists in `rates`. */
export function rateRuns(applied: readonly { t: number; rate: number; source: string }[]): RateRun[] {
  const runs: RateRun[] = [];
  for (const { t, rate, source } of applied) {
    const last = runs.at(-1);
    if (!last || last.rate !== rate || last.source !== source) runs.push({ since: t, rate, source });
  }
  return runs;
}
