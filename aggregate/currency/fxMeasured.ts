import type { StoreCalls } from '../../infra/store.ts';
import { stablecoinOfQuote, usdStablecoins, type UsdStablecoin } from './currencies.ts';

/**
 * FX rates measured from our own trades (aggregate/METHODOLOGY.md, "FX and currencies"): fiat
 * currencies from venues that list an asset against both that currency and USD, and the USD
 * stablecoins from their own USD markets.
 */

/** Parameters of the measured rates, with their defaults. */
export interface FxMeasurementParams {
  /** Trailing window of one-minute buckets read, ms. */
  windowMs: number;
  /** Fewest one-minute observations behind a measured rate; below it the rate is not measured. */
  minMinutes: number;
  /** Assets whose fiat and USD markets are compared: the ones venues most often list against fiat. */
  bridgeAssets: readonly string[];
}

export const defaultFxMeasurement: FxMeasurementParams = {
  windowMs: 60 * 60_000,
  minMinutes: 3,
  bridgeAssets: ['bitcoin', 'ethereum', 'tether', 'usd-coin'],
};

/** Per venue, asset, quote and minute: the sums behind that minute's VWAP, from the 1m candles. */
interface MinuteRow {
  venue: string;
  asset: string;
  quote: string;
  minute: number;
  quoteVolume: number;
  volume: number;
}

const minuteSql = `
SELECT venue, asset, quote, toUnixTimestamp(bucket) AS minute, sum(quote_volume) AS quoteVolume, sum(volume) AS volume
FROM candles_1m
WHERE asset IN {assets:Array(String)} AND quote IN {quotes:Array(String)}
  AND bucket > toDateTime({from_s:UInt32}, 'UTC') AND bucket <= toDateTime({to_s:UInt32}, 'UTC')
GROUP BY venue, asset, quote, bucket
HAVING volume > 0`;

/** The one-minute buckets that started in (at - window, at]. */
function loadMinutes(store: StoreCalls, at: number, params: FxMeasurementParams, assets: readonly string[], quotes: readonly string[]): Promise<MinuteRow[]> {
  return store.rows<MinuteRow>(minuteSql, {
    assets,
    quotes,
    from_s: Math.floor((at - params.windowMs) / 1000),
    to_s: Math.floor(at / 1000),
  });
}

export interface MeasuredRate {
  /** Units of the currency per 1 USD. */
  perUsd: number;
  /** e.g. `measured:kraken,bitstamp EUR/USD cross, 42 min`. */
  source: string;
}

/** The value at which the cumulative weight first reaches half of the total (values sorted ascending). */
export function weightedMedian(points: readonly { value: number; weight: number }[]): number | undefined {
  const sorted = points.filter((p) => p.weight > 0).sort((a, b) => a.value - b.value);
  const total = sorted.reduce((sum, p) => sum + p.weight, 0);
  let cumulative = 0;
  for (const p of sorted) {
    cumulative += p.weight;
    if (cumulative >= total / 2) return p.value;
  }
  return undefined;
}

/**
 * Measured units-per-USD of fiat currencies (upper-case codes as venues write them, USD excluded).
 * Each observation is one venue, bridge asset and minute in which the asset traded both against
 * the currency and against USD: rate = VWAP in the currency / VWAP in USD, weighted by the USD
 * value of the thinner of the two legs. The rate is the weighted median of the observations, once
 * there are at least `minMinutes` of them. Only true USD markets serve as the USD leg, so a
 * stablecoin's drift from par never enters a fiat rate.
 */
export async function loadMeasuredFiatRates(
  store: StoreCalls,
  at: number,
  currencies: readonly string[],
  params: FxMeasurementParams = defaultFxMeasurement,
): Promise<Map<string, MeasuredRate>> {
  const rows = await loadMinutes(store, at, params, params.bridgeAssets, ['USD', ...currencies]);
  const usdLeg = new Map<string, MinuteRow>();
  for (const r of rows) if (r.quote === 'USD') usdLeg.set(`${r.venue}\u0000${r.asset}\u0000${r.minute}`, r);

  const observations = new Map<string, { value: number; weight: number; venue: string }[]>();
  for (const r of rows) {
    if (r.quote === 'USD') continue;
    const usd = usdLeg.get(`${r.venue}\u0000${r.asset}\u0000${r.minute}`);
    if (!usd) continue;
    const perUsd = r.quoteVolume / r.volume / (usd.quoteVolume / usd.volume);
    const weight = Math.min(usd.quoteVolume, r.quoteVolume / perUsd);
    const points = observations.get(r.quote) ?? [];
    points.push({ value: perUsd, weight, venue: r.venue });
    observations.set(r.quote, points);
  }

  const rates = new Map<string, MeasuredRate>();
  for (const [currency, points] of observations) {
    const perUsd = points.length >= params.minMinutes ? weightedMedian(points) : undefined;
    if (perUsd === undefined) continue;
    const venues = [...new Set(points.map((p) => p.venue))].sort().join(',');
    rates.set(currency, { perUsd, source: `measured:${venues} ${currency}/USD cross, ${points.length} min` });
  }
  return rates;
}

/** The quote code of each stablecoin, as its rate's source names it. */
const quoteOf = Object.fromEntries(Object.entries(stablecoinOfQuote).map(([quote, asset]) => [asset, quote])) as Record<UsdStablecoin, string>;

export interface StablecoinRate {
  /** USD per 1 unit of the stablecoin. */
  usdPer: number;
  /** `measured:<venues> USDT/USD`, or `par` when no USD market of it traded enough in the window. */
  source: string;
}

/**
 * USD per unit of USDT and USDC: the VWAP over the window of their USD-quoted markets on every
 * venue we collect, once they traded in at least `minMinutes` minutes; otherwise 1 with source
 * `par`, the assumption the index made before these rates were measured.
 */
export async function loadStablecoinRates(
  store: StoreCalls,
  at: number,
  params: FxMeasurementParams = defaultFxMeasurement,
): Promise<Record<UsdStablecoin, StablecoinRate>> {
  const rows = await loadMinutes(store, at, params, usdStablecoins, ['USD']);
  const rateOf = (asset: UsdStablecoin): StablecoinRate => {
    const own = rows.filter((r) => r.asset === asset);
    const minutes = new Set(own.map((r) => r.minute)).size;
    if (minutes < params.minMinutes) return { usdPer: 1, source: 'par' };
    const quoteVolume = own.reduce((sum, r) => sum + r.quoteVolume, 0);
    const volume = own.reduce((sum, r) => sum + r.volume, 0);
    const venues = [...new Set(own.map((r) => r.venue))].sort().join(',');
    return { usdPer: quoteVolume / volume, source: `measured:${venues} ${quoteOf[asset]}/USD` };
  };
  return { tether: rateOf('tether'), 'usd-coin': rateOf('usd-coin') };
}
