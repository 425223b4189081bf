/** Fiat quote currencies served (spec 4.4: usd, eur, gbp, idr, jpy and 25 more). */
export const fiatCurrencies = [
  'usd', 'eur', 'gbp', 'idr', 'jpy', 'ars', 'brl', 'sek', 'sgd', 'thb', 'try', 'twd', 'uah', 'vnd', 'zar',
  'aed', 'aud', 'bdt', 'cad', 'chf', 'clp', 'cny', 'czk', 'dkk', 'hkd', 'inr', 'krw', 'mxn', 'nok', 'pln',
] as const;

/** Every quote currency served: the fiat ones, then btc and eth through our own index price. */
export const servedCurrencies = [...fiatCurrencies, 'btc', 'eth'] as const;
export type Currency = (typeof servedCurrencies)[number];

/**
 * The quotes whose markets the index price reads and whose amounts count as USD: USD itself and
 * the USD stablecoins, converted at their measured rates (fxMeasured.ts). The only copy of this
 * list: every query binds it as {usd_quotes:Array(String)}. Three objects of frozen migrations keep
 * a literal copy (a view cannot take a parameter); __tests__/usdQuotes.store.test.ts pins them to it.
 */
export const usdQuotes = ['USD', 'USDT', 'USDC'] as const;
export type UsdQuote = (typeof usdQuotes)[number];

/** The USD stablecoins among usdQuotes, by quote code: the catalog asset whose USD markets measure it. */
export const stablecoinOfQuote = { USDT: 'tether', USDC: 'usd-coin' } as const satisfies Record<Exclude<UsdQuote, 'USD'>, string>;
export type UsdStablecoin = (typeof stablecoinOfQuote)[keyof typeof stablecoinOfQuote];
export const usdStablecoins: readonly UsdStablecoin[] = Object.values(stablecoinOfQuote);

/** The USD stablecoin a quote code names, if it is one. */
export function stablecoinOf(quote: string): UsdStablecoin | undefined {
  return Object.hasOwn(stablecoinOfQuote, quote) ? stablecoinOfQuote[quote as keyof typeof stablecoinOfQuote] : undefined;
}
