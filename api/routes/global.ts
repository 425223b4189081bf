import { readFileSync } from 'node:fs';
import { z } from 'zod';
import type { Config } from '../../infra/config.ts';
import type { StoreCalls } from '../../infra/store.ts';
import { measuredRule } from '../../aggregate/indexPrices/latestIndexPrices.ts';
import { loadUsdRates } from '../../aggregate/currency/usdRates.ts';
import { valueCurrencies } from '../currency.ts';
import { sharedAssetMarkets, universeCapChange } from '../read/assetMarket.ts';
import type { CachedRoute } from '../responseCache.ts';

const globalSql = readFileSync(new URL('./global.sql', import.meta.url), 'utf8');
/** market_cap_percentage lists the largest assets only. */
const dominanceTop = 10;

const perCurrency = (what: string) =>
  z
    .record(z.string(), z.number())
    .describe(`${what}, per currency: usd, and ${valueCurrencies.filter((c) => c !== 'usd').join(', ')} at the current rate when one is known (a currency without a rate is left out)`);

const globalResponse = z.object({
  active_cryptocurrencies: z.number().int().describe('assets with an index price (a trade on a USD, USDT or USDC market in the last 48 h)'),
  markets: z.number().int().describe('markets (venue and symbol, any quote) with a trade in the last 24 h'),
  total_market_cap: perCurrency('sum of the market caps of the active assets'),
  total_volume: perCurrency('sum of their 24 h volumes on the index markets'),
  market_cap_percentage: z
    .record(z.string(), z.number())
    .describe(`symbol -> percent of total_market_cap, for the ${dominanceTop} largest assets`),
  market_cap_change_percentage_24h_usd: z
    .number()
    .describe(
      'percent change of the summed USD market cap over one fixed universe: the assets with a price now and a price at or before 24 h ago, ' +
        'each valued with the supply at its time, so a new listing adds nothing to either sum; 0 while no asset has both (e.g. in our first day)',
    ),
});
export type GlobalResponse = z.infer<typeof globalResponse>;

/** GET /v1/global (spec 4.9). */
export function globalRoute(deps: { store: StoreCalls; config: Pick<Config, 'INDEX_STALE_AFTER_MS' | 'STORE_MIN_FREE_MB'> }): CachedRoute {
  return {
    path: '/v1/global',
    refreshSeconds: 30,
    doc: {
      operationId: 'global',
      tag: 'Market',
      summary: 'Market totals: market cap, volume, dominance, active assets and markets',
      query: z.object({}),
      response: globalResponse,
      errors: [503],
    },
    resolve() {
      return {
        key: 'global',
        build: async (): Promise<GlobalResponse> => {
          const { at, priced } = await sharedAssetMarkets(deps.store, measuredRule(deps.config));
          const nowS = Math.floor(at / 1000);
          const [[counted], rates] = await Promise.all([
            deps.store.rows<{ markets: number }>(globalSql, { from_s: nowS - 86_400, now_s: nowS }),
            loadUsdRates(deps.store, at),
          ]);
          const totalCap = priced.reduce((sum, m) => sum + m.marketCap, 0);
          const totalVolume = priced.reduce((sum, m) => sum + m.volume24h, 0);
          const known = valueCurrencies.flatMap((c) => {
            const rate = rates.perUsd(c);
            return rate === undefined ? [] : [[c, rate] as const];
          });
          const dominance: Record<string, number> = {};
          // priced is in rank order; a symbol two assets share keeps the larger one.
          for (const m of priced.slice(0, dominanceTop)) dominance[m.asset.symbol] ??= totalCap > 0 ? (m.marketCap / totalCap) * 100 : 0;
          return {
            active_cryptocurrencies: priced.length,
            markets: counted?.markets ?? 0,
            total_market_cap: Object.fromEntries(known.map(([c, rate]) => [c, totalCap * rate])),
            total_volume: Object.fromEntries(known.map(([c, rate]) => [c, totalVolume * rate])),
            market_cap_percentage: dominance,
            market_cap_change_percentage_24h_usd: universeCapChange(priced, '24h', at) ?? 0,
          };
        },
      };
    },
  };
}
