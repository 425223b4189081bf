import { readFileSync } from 'node:fs';
import { wholeTokens } from '../../../infra/catalog/assetUniverse.ts';
import { catalogAssets, type CatalogAsset } from '../../../infra/catalog/catalog.ts';
import { ConfigError } from '../../../infra/config.ts';
import { fiatCurrencies } from '../../currency/currencies.ts';
import type { Store } from '../../../infra/store.ts';
import type { ChainConfig } from './chainsConfig.ts';
import type { SwapAmounts } from './uniswapEvents.ts';

// USD value of a swap from ONE leg (research/methodology.md 8.3: counting both legs would count
// each trade twice). The method is in aggregate/METHODOLOGY.md, "DEX chains".

const indexPriceSecondsSql = readFileSync(new URL('./indexPriceSeconds.sql', import.meta.url), 'utf8');

/** An index price older than this (before the swap's block time) does not value the swap. */
export const priceLookbackSeconds = 3_600;

/** A token we can value: the catalog asset whose USD value it carries. */
export interface ValuedToken {
  asset: string;
  decimals: number;
  /** A USD stablecoin: valued at 1 USD (par). The index instead converts USDT and USDC quotes at their measured rates (aggregate/currency/fxMeasured.ts). */
  par: boolean;
  /** Catalog position (0 = largest): between two priced legs, the larger asset's price is used. */
  rank: number;
}

const otherFiat = fiatCurrencies.filter((c) => c !== 'usd');

/**
 * Valued at 1 USD: a catalog stablecoin, unless its ticker names another fiat currency (EURC):
 * the catalog says an asset is pegged, not to what, and a euro coin at 1 USD would be wrong.
 */
function atUsdPar(asset: CatalogAsset): boolean {
  return asset.stablecoin && !otherFiat.some((c) => asset.symbol.toLowerCase().startsWith(c));
}

/**
 * Contract address -> valued token for one chain: the chain's explicit `tokens` first (e.g. WETH
 * -> ethereum, which the catalog lists as its own asset without an index price), then every
 * catalog asset with a contract on the chain's platform and known decimals.
 */
export function tokenBook(chain: ChainConfig, assets: readonly CatalogAsset[] = catalogAssets): Map<string, ValuedToken> {
  const rankOf = new Map(assets.map((a, i) => [a.id, i]));
  const book = new Map<string, ValuedToken>();
  for (const [i, asset] of assets.entries()) {
    const contract = asset.platforms[chain.platform];
    if (!contract || contract.decimal_place === null) continue;
    book.set(contract.contract_address.toLowerCase(), { asset: asset.id, decimals: contract.decimal_place, par: atUsdPar(asset), rank: i });
  }
  for (const [address, token] of Object.entries(chain.tokens)) {
    const rank = rankOf.get(token.asset);
    if (rank === undefined) throw new ConfigError(`CHAINS_CONFIG chains.${chain.id}.tokens.${address}: "${token.asset}" is not a catalog asset id`);
    book.set(address, { asset: token.asset, decimals: token.decimals, par: atUsdPar(assets[rank]!), rank });
  }
  return book;
}

export interface SwapToValue {
  /** Block time, unix seconds. */
  ts: number;
  token0: string;
  token1: string;
  amounts: SwapAmounts;
}

export interface SwapValue {
  /** USD value of the chosen leg; null when neither leg could be valued (the swap is still counted). */
  usd: number | null;
  /** Address of the token whose leg was valued; '' when unvalued. */
  token: string;
  /** How: `par:<asset>` or `index:<asset>`; '' when unvalued. */
  by: string;
}

/** Index price seconds of one asset, oldest first. */
interface PriceSeries {
  seconds: number[];
  prices: number[];
}

/** The latest price at or before `ts`, no older than priceLookbackSeconds. */
export function priceAt(series: PriceSeries | undefined, ts: number): number | undefined {
  if (!series) return undefined;
  let lo = 0;
  let hi = series.seconds.length - 1;
  let found = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (series.seconds[mid]! <= ts) {
      found = mid;
      lo = mid + 1;
    } else hi = mid - 1;
  }
  if (found < 0 || ts - series.seconds[found]! > priceLookbackSeconds) return undefined;
  return series.prices[found];
}

/**
 * Values each swap on one leg: a stablecoin leg at par if there is one, else the leg whose asset
 * ranks higher in the catalog among those with an index price at the swap's time. The quantity
 * of a leg is what went in plus what came out (one of the two is 0 except in V2 flash swaps).
 */
export async function valueSwaps(store: Store, book: ReadonlyMap<string, ValuedToken>, swaps: readonly SwapToValue[]): Promise<SwapValue[]> {
  const indexAssets = new Set<string>();
  let from = Infinity;
  let to = -Infinity;
  for (const s of swaps) {
    for (const token of [s.token0, s.token1]) {
      const t = book.get(token);
      if (t && !t.par) indexAssets.add(t.asset);
    }
    from = Math.min(from, s.ts);
    to = Math.max(to, s.ts);
  }
  const series = new Map<string, PriceSeries>();
  if (indexAssets.size > 0) {
    const rows = await store.rows<{ asset: string; second: number; price: number }>(indexPriceSecondsSql, {
      assets: [...indexAssets].sort(),
      from_s: Math.max(0, from - priceLookbackSeconds),
      to_s: to,
    });
    for (const r of rows) {
      let s = series.get(r.asset);
      if (!s) series.set(r.asset, (s = { seconds: [], prices: [] }));
      s.seconds.push(r.second);
      s.prices.push(r.price);
    }
  }

  return swaps.map((s) => {
    const legs = [
      { token: s.token0, raw: s.amounts.amount0In + s.amounts.amount0Out },
      { token: s.token1, raw: s.amounts.amount1In + s.amounts.amount1Out },
    ]
      .map((leg) => ({ ...leg, valued: book.get(leg.token) }))
      .filter((leg): leg is typeof leg & { valued: ValuedToken } => leg.valued !== undefined)
      .map((leg) => ({ ...leg, price: leg.valued.par ? 1 : priceAt(series.get(leg.valued.asset), s.ts) }))
      .filter((leg): leg is typeof leg & { price: number } => leg.price !== undefined)
      .sort((a, b) => Number(b.valued.par) - Number(a.valued.par) || a.valued.rank - b.valued.rank);
    const leg = legs[0];
    if (!leg) return { usd: null, token: '', by: '' };
    const quantity = wholeTokens(leg.raw, leg.valued.decimals);
    return { usd: quantity * leg.price, token: leg.token, by: `${leg.valued.par ? 'par' : 'index'}:${leg.valued.asset}` };
  });
}
