import { z } from 'zod';
import { loadMeasuredFiatRates } from '../aggregate/fxMeasured.ts';
import type { Store } from '../infra/store.ts';
import { ApiError } from './errors.ts';

/** Fiat quote currencies served (spec 4.4: usd, eur, gbp, idr, jpy and 25 more). */
export const fiatCurrencies = [
  'usd', 'eur', 'gbp', 'idr', 'jpy', 'ars', 'brl', 'sek', 'sgd', 'thb', 'try', 'twd', 'uah', 'vnd', 'zar',
  'aed', 'aud', 'bdt', 'cad', 'chf', 'clp', 'cny', 'czk', 'dkk', 'hkd', 'inr', 'krw', 'mxn', 'nok', 'pln',
] as const;

/** Every quote currency served: the fiat ones, then btc and eth through our own index price. */
export const servedCurrencies = [...fiatCurrencies, 'btc', 'eth'] as const;
export type Currency = (typeof servedCurrencies)[number];

/** The `vs` query parameter shared by the coin endpoints. */
export const vsParam = z
  .enum(servedCurrencies, { error: `must be one of ${servedCurrencies.join(', ')}` })
  .default('usd')
  .describe('quote currency; USD figures are multiplied by the rate returned in `rate` (methodology: aggregate/METHODOLOGY.md, "FX and currencies")');

export interface UsdRates {
  /** units of `c` per 1 USD at the time asked (1 for usd); undefined when no rate is known */
  perUsd(c: Currency): number | undefined;
  /** where that rate comes from, e.g. 'measured:kraken EUR/USD cross, 42 min', 'reference:ecb 2026-11-20', 'index:bitcoin 2026-11-22T10:00:00Z' */
  source(c: Currency): string | undefined;
}

/** The crypto currencies served, by the catalog id whose index price converts them. */
const indexCurrencies = { btc: 'bitcoin', eth: 'ethereum' } as const;
/** How far back an index price is looked for, as /v1/prices does. */
const indexLookbackS = 2 * 86_400;

const referenceSql = `
SELECT currency, argMax(per_usd, date) AS perUsd, toString(max(date)) AS day, argMax(source, date) AS source
FROM fx_reference_rates FINAL
WHERE date <= toDate({day:String}) AND currency IN {currencies:Array(String)}
GROUP BY currency`;

const indexSql = `
SELECT asset, argMax(vwap, second) AS price, toUnixTimestamp(max(second)) AS latestSecond
FROM
(
    SELECT asset, second, price AS vwap
    FROM index_price_history
    WHERE asset IN {assets:Array(String)}
      AND second > toDateTime({from_s:UInt32}, 'UTC') AND second <= toDateTime({to_s:UInt32}, 'UTC')
)
GROUP BY asset`;

/**
 * Units per USD of every served currency at `at` (aggregate/METHODOLOGY.md, "FX and currencies").
 * A fiat currency takes, in this order: the rate measured from venues that list it next to USD;
 * the latest reference rate dated on or before `at`'s UTC day; nothing. btc and eth are 1 / our
 * own index price of the latest second computed in the 48 h up to `at`.
 */
export async function loadUsdRates(store: Store, at: number): Promise<UsdRates> {
  const fiat = fiatCurrencies.filter((c) => c !== 'usd');
  const atS = Math.floor(at / 1000);
  const [measured, reference, index] = await Promise.all([
    loadMeasuredFiatRates(store, at, fiat.map((c) => c.toUpperCase())),
    store.rows<{ currency: string; perUsd: number; day: string; source: string }>(referenceSql, {
      day: new Date(at).toISOString().slice(0, 10),
      currencies: fiat,
    }),
    store.rows<{ asset: string; price: number; latestSecond: number }>(indexSql, {
      assets: Object.values(indexCurrencies),
      from_s: atS - indexLookbackS,
      to_s: atS,
    }),
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
    const row = index.find((i) => i.asset === asset);
    if (row && row.price > 0) {
      rates.set(c, { perUsd: 1 / row.price, source: `index:${asset} ${new Date(row.latestSecond * 1000).toISOString().replace('.000Z', 'Z')}` });
    }
  }
  return {
    perUsd: (c) => rates.get(c)?.perUsd,
    source: (c) => rates.get(c)?.source,
  };
}

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
