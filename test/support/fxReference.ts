// The FX rules (aggregate/METHODOLOGY.md, "FX and currencies") recomputed from the raw rows a test
// stores, in plain TypeScript: the expected rates of API and index tests, instead of the
// production loaders (aggregate/currency/usdRates.ts, fxMeasured.ts) whose bugs they would share.
// Only the published parameters (window, minimum minutes, bridge assets) and the list of fiat
// currencies are read from production.
import { fiatCurrencies } from '../../aggregate/currency/currencies.ts';
import { defaultFxMeasurement } from '../../aggregate/currency/fxMeasured.ts';
import type { TradeRow } from './harness.ts';

/** A row of fx_reference_rates as a test stores it: units of `currency` per USD on `date` (YYYY-MM-DD). */
export interface ReferenceRateRow {
  date: string;
  currency: string;
  per_usd: number;
}

const minuteMs = 60_000;
const sum = (list: readonly TradeRow[], value: (t: TradeRow) => number) => list.reduce((s, t) => s + value(t), 0);
const notional = (list: readonly TradeRow[]) => sum(list, (t) => t.price * t.quantity);
const quantity = (list: readonly TradeRow[]) => sum(list, (t) => t.quantity);

/** The trades of the one-minute buckets read at `at`: buckets starting in (at - window, at], whole seconds. */
function tradesInWindow(trades: readonly TradeRow[], at: number): TradeRow[] {
  const fromS = Math.floor((at - defaultFxMeasurement.windowMs) / 1000);
  const toS = Math.floor(at / 1000);
  return trades.filter((t) => {
    const bucketS = Math.floor(t.ts / minuteMs) * 60;
    return bucketS > fromS && bucketS <= toS && t.quantity > 0;
  });
}

/** Trades grouped by venue, asset and minute. */
function byVenueAssetMinute(trades: readonly TradeRow[]): TradeRow[][] {
  const groups = new Map<string, TradeRow[]>();
  for (const t of trades) {
    const key = `${t.venue}|${t.asset}|${Math.floor(t.ts / minuteMs)}`;
    groups.set(key, [...(groups.get(key) ?? []), t]);
  }
  return [...groups.values()];
}

/**
 * The measured units of fiat `quote` (upper case, e.g. EUR) per USD at `at`: one observation per
 * venue, bridge asset and minute with trades against both `quote` and USD (VWAP ratio, weighted by
 * the USD value of the thinner leg); the weighted median once there are enough of them.
 */
export function measuredPerUsd(trades: readonly TradeRow[], quote: string, at: number): { perUsd: number; minutes: number; venues: string[] } | undefined {
  const bridged = tradesInWindow(trades, at).filter((t) => defaultFxMeasurement.bridgeAssets.includes(t.asset));
  const observations: { value: number; weight: number; venue: string }[] = [];
  for (const group of byVenueAssetMinute(bridged)) {
    const fiatLeg = group.filter((t) => t.quote === quote);
    const usdLeg = group.filter((t) => t.quote === 'USD');
    if (fiatLeg.length === 0 || usdLeg.length === 0) continue;
    const value = notional(fiatLeg) / quantity(fiatLeg) / (notional(usdLeg) / quantity(usdLeg));
    observations.push({ value, weight: Math.min(notional(usdLeg), notional(fiatLeg) / value), venue: group[0]!.venue });
  }
  if (observations.length < defaultFxMeasurement.minMinutes) return undefined;
  // Weighted median: the smallest value whose weight at or below it reaches half of the total.
  const total = observations.reduce((s, o) => s + o.weight, 0);
  const values = observations.map((o) => o.value).sort((a, b) => a - b);
  const perUsd = values.find((v) => observations.filter((o) => o.value <= v).reduce((s, o) => s + o.weight, 0) >= total / 2)!;
  return { perUsd, minutes: observations.length, venues: [...new Set(observations.map((o) => o.venue))].sort() };
}

/** The reference rate of `currency` (lower case) dated on or before `at`'s UTC day, the latest such. */
export function referencePerUsd(rows: readonly ReferenceRateRow[], currency: string, at: number): number | undefined {
  const day = new Date(at).toISOString().slice(0, 10);
  return rows.filter((r) => r.currency === currency && r.date <= day).sort((a, b) => (a.date < b.date ? -1 : 1)).at(-1)?.per_usd;
}

/** Units of fiat `currency` (lower case) per USD at `at`: measured when it can be, else the reference, else none. */
export function fiatPerUsd(trades: readonly TradeRow[], rows: readonly ReferenceRateRow[], currency: string, at: number): number | undefined {
  if (currency === 'usd') return 1;
  return measuredPerUsd(trades, currency.toUpperCase(), at)?.perUsd ?? referencePerUsd(rows, currency, at);
}

/** USD per unit of a stablecoin (catalog id) at `at`: the VWAP of its USD markets once they traded in enough minutes, else par. */
export function stablecoinUsdPer(trades: readonly TradeRow[], asset: string, at: number): number {
  const own = tradesInWindow(trades, at).filter((t) => t.asset === asset && t.quote === 'USD');
  const minutes = new Set(own.map((t) => Math.floor(t.ts / minuteMs))).size;
  return minutes < defaultFxMeasurement.minMinutes ? 1 : notional(own) / quantity(own);
}

/**
 * USD per unit of a quote at `at`, as the index values a market's price: USD 1, USDT and USDC at
 * their measured rate, a fiat currency through its rate; undefined for anything else (no rate).
 */
export function quoteUsdPer(trades: readonly TradeRow[], rows: readonly ReferenceRateRow[], at: number): (quote: string) => number | undefined {
  const stablecoins: Record<string, string> = { USDT: 'tether', USDC: 'usd-coin' };
  return (quote) => {
    if (quote === 'USD') return 1;
    if (stablecoins[quote]) return stablecoinUsdPer(trades, stablecoins[quote], at);
    const currency = quote.toLowerCase();
    if (!(fiatCurrencies as readonly string[]).includes(currency)) return undefined;
    const perUsd = fiatPerUsd(trades, rows, currency, at);
    return perUsd === undefined ? undefined : 1 / perUsd;
  };
}
