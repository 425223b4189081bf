import { fiatCurrencies, stablecoinOf, type Currency, type UsdStablecoin } from './currency/currencies.ts';
import type { StablecoinRate } from './currency/fxMeasured.ts';
import type { UsdRates } from './currency/usdRates.ts';

/** USD per unit of a quote currency, as the index applies it (see quoteRate); loaded by indexInputs.ts. */
export interface QuoteRates {
  stablecoins: Record<UsdStablecoin, StablecoinRate>;
  fiat: UsdRates;
}

/** Crypto quotes valued through our own index of the same second (Coin Metrics lists BTC and ETH quotes for other assets). */
const cryptoQuotes: Record<string, string> = { BTC: 'bitcoin', ETH: 'ethereum' };
/** The assets whose index values other assets' markets: their seconds are computed with any asset's. */
export const quoteIndexAssets: readonly string[] = Object.values(cryptoQuotes);
/** The quotes valued through `asset`'s index (BTC for bitcoin); none for most assets. */
export const quotesValuedBy = (asset: string): string[] => Object.keys(cryptoQuotes).filter((quote) => cryptoQuotes[quote] === asset);
/** Whether a market quoted in `quote` is valued through another asset's index of the same second. */
export const valuedThroughIndex = (quote: string): boolean => Object.hasOwn(cryptoQuotes, quote);
const fiatQuotes = new Set<string>(fiatCurrencies.filter((c) => c !== 'usd'));

/**
 * USD per unit of `quote` for a market of `asset` at a second: USD 1; USDT and USDC at their
 * measured rate (par while unmeasured); fiat through FX (per USD, inverted); BTC and ETH through
 * the index price of that second (`indexNow`), except for bitcoin and ethereum themselves (Coin
 * Metrics: only fiat-quoted markets for those two). undefined: no rate.
 */
export function quoteRate(quote: string, asset: string, rates: QuoteRates, indexNow: Pick<ReadonlyMap<string, number>, 'get'>): number | undefined {
  if (quote === 'USD') return 1;
  const stablecoin = stablecoinOf(quote);
  if (stablecoin) return rates.stablecoins[stablecoin].usdPer;
  const indexAsset = cryptoQuotes[quote];
  if (indexAsset) return quoteIndexAssets.includes(asset) ? undefined : indexNow.get(indexAsset);
  const fiat = quote.toLowerCase();
  if (fiatQuotes.has(fiat)) {
    const perUsd = rates.fiat.perUsd(fiat as Currency);
    return perUsd === undefined || perUsd <= 0 ? undefined : 1 / perUsd;
  }
  return undefined;
}

/** Assets whose index prices value other assets' quotes (cryptoQuotes) come first, then by id. */
export function assetOrder(a: string, b: string): number {
  const rank = (x: string) => (x === 'bitcoin' ? 0 : x === 'ethereum' ? 1 : 2);
  return rank(a) - rank(b) || (a < b ? -1 : a > b ? 1 : 0);
}
