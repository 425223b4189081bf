import { latestIndexPrices } from '../indexPrices/latestIndexPrices.ts';
import type { StoreCalls } from '../../infra/store.ts';
import { fiatCurrencies, stablecoinOfQuote, usdQuotes, type Currency, type UsdQuote } from './currencies.ts';
import { loadMeasuredFiatRates, loadStablecoinRates } from './fxMeasured.ts';

// USD conversion (aggregate/METHODOLOGY.md, "FX and currencies"): the rate of every served
// currency, and the USD value of the quotes the index reads.

export interface UsdRates {
  /** units of `c` per 1 USD at the time asked (1 for usd); undefined when no rate is known */
  perUsd(c: Currency): number | undefined;
  /** where that rate comes from, e.g. 'measured:kraken EUR/USD cross, 42 min', 'reference:ecb 2026-11-20', 'index:bitcoin 2026-11-22T10:00:00Z' */
  source(c: Currency): string | undefined;
}

/** The crypto currencies served, by the catalog id whose index price converts them. */
const indexCurrencies = { btc: 'bitcoin', eth: 'ethereum' } as const;

const referenceSql = `
SELECT currency, argMax(per_usd, date) AS perUsd, toString(max(date)) AS day, argMax(source, date) AS source
FROM fx_reference_rates FINAL
WHERE date <= toDate({day:String}) AND currency IN {currencies:Array(String)}
GROUP BY currency`;

/**
 * Units per USD of every served currency at `at`. A fiat currency takes, in this order: the rate
 * measured from venues that list it next to USD; the latest reference rate dated on or before
 * `at`'s UTC day; nothing. btc and eth are 1 / our own latest index price at `at`
 * (latestIndexPrices: the latest second computed in the 48 h up to `at`).
 */
export async function loadUsdRates(store: StoreCalls, at: number): Promise<UsdRates> {
  const fiat = fiatCurrencies.filter((c) => c !== 'usd');
  const [measured, reference, index] = await Promise.all([
    loadMeasuredFiatRates(store, at, fiat.map((c) => c.toUpperCase())),
    store.rows<{ currency: string; perUsd: number; day: string; source: string }>(referenceSql, {
      day: new Date(at).toISOString().slice(0, 10),
      currencies: fiat,
    }),
    latestIndexPrices(store, Object.values(indexCurrencies), at),
  ]);

  const rates = new Map<Currency, { perUsd: number; source: string }>([['usd', { perUsd: 1, source: 'usd' }]]);
  const referenceOf = new Map(reference.map((r) => [r.currency, r]));
  for (const c of fiat) {
    const m = measured.get(c.toUpperCase());
    const r = referenceOf.get(c);
    if (m) rates.set(c, m);
    else if (r) rates.set(c, { perUsd: r.perUsd, source: `reference:${r.source} ${r.day}` });
  }
  for (const [c, asset] of Object.entries(indexCurrencies) as [keyof typeof indexCurrencies, string][]) {
    const latest = index.get(asset);
    if (latest && latest.price > 0) {
      rates.set(c, { perUsd: 1 / latest.price, source: `index:${asset} ${new Date(latest.second).toISOString().replace('.000Z', 'Z')}` });
    }
  }
  return {
    perUsd: (c) => rates.get(c)?.perUsd,
    source: (c) => rates.get(c)?.source,
  };
}

/** USD per unit of each of usdQuotes at a time: USD 1, USDT and USDC at their measured rate (par while unmeasured), as the index converts them. */
export type UsdQuoteRates = Record<UsdQuote, number>;

export async function loadUsdQuoteRates(store: StoreCalls, at: number): Promise<UsdQuoteRates> {
  const stablecoins = await loadStablecoinRates(store, at);
  return { USD: 1, USDT: stablecoins[stablecoinOfQuote.USDT].usdPer, USDC: stablecoins[stablecoinOfQuote.USDC].usdPer };
}

/**
 * The bound parameters of a query that values amounts quoted in usdQuotes in USD:
 * `{usd_quotes:Array(String)}` and, in the same order, `{usd_per_quote:Array(Float64)}`, read as
 * `amount * transform(quote, {usd_quotes:Array(String)}, {usd_per_quote:Array(Float64)}, 0.)`.
 */
export function usdQuoteParams(rates: UsdQuoteRates): { usd_quotes: readonly UsdQuote[]; usd_per_quote: number[] } {
  return { usd_quotes: usdQuotes, usd_per_quote: usdQuotes.map((q) => rates[q]) };
}
