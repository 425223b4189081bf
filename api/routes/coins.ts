import { z } from 'zod';
import { describeAsset } from '../../infra/catalog/discovered.ts';
import type { Config } from '../../infra/config.ts';
import type { StoreCalls } from '../../infra/store.ts';
import { measuredRule } from '../../aggregate/indexPrices/latestIndexPrices.ts';
import { parseParams } from '../errors.ts';
import { flagParam, idListParam, pageOf, paginationQuery } from '../listQuery.ts';
import { sharedAssetMarkets, type PricedMarket } from '../read/assetMarket.ts';
import { loadIndexCloses } from '../read/indexCloses.ts';
import type { CachedRoute } from '../responseCache.ts';
import { publicUrl } from '../coinImages.ts';

const hourMs = 3_600_000;
const sparklineHours = 168;
/** How far before the first sparkline hour a close is looked for, to carry into hours without trades. */
const sparklineLookbackMs = 7 * 24 * hourMs;

const percentChange = (window: string) =>
  z.number().describe(`percent change of the price against the index price ${window} ago (against our oldest price when our history of the asset is shorter)`);

/** Coin row (spec 2.1); every price in USD. */
const coinRow = z.object({
  id: z.string().describe('asset id (catalog slug)'),
  symbol: z.string().describe('ticker, lower case'),
  name: z.string().describe('display name'),
  image: z.string().describe('URL of the large logo'),
  current_price: z.number().describe('USD index price: volume-weighted price of the latest second with trades on the index markets (USD, and USDT/USDC at their measured rates)'),
  market_cap: z.number().describe('current_price x circulating_supply'),
  fully_diluted_valuation: z.number().describe('current_price x max_supply, or x total_supply when there is no max supply'),
  total_volume: z.number().describe('USD traded on the index markets in the last 24 h'),
  high_24h: z.number().describe('highest trade on the index markets in the last 24 h; the current price when the asset did not trade in 24 h'),
  low_24h: z.number().describe('lowest trade on the index markets in the last 24 h; the current price when the asset did not trade in 24 h'),
  market_cap_rank: z.number().int().describe('1-based, by market_cap among the assets with a price'),
  price_change_percentage_1h_in_currency: percentChange('1 h'),
  price_change_percentage_24h_in_currency: percentChange('24 h'),
  price_change_percentage_7d_in_currency: percentChange('7 days (volume-weighted price of the hour that holds that time)'),
  price_change_percentage_30d_in_currency: percentChange('30 days (volume-weighted price of the hour that holds that time)'),
  circulating_supply: z.number().describe('units in circulation now, from the catalog (issuance schedule where the asset has one)'),
  total_supply: z.number().describe('units that exist now, circulating or not'),
  max_supply: z.number().nullable().describe('null when the asset has no maximum supply'),
  measured: z.boolean().describe("true while current_price comes from trades (not carried by the fail-closed rule), its last trade is at most INDEX_STALE_AFTER_MS (default 60 s) old, and the store's disk has at least STORE_MIN_FREE_MB (default 1024) free (below it, trades are no longer stored)"),
  ath: z.number().describe('highest trade on the index markets since we started measuring the asset ("all time" = our own history)'),
  ath_change_percentage: z.number().describe('percent from ath to current_price'),
  atl: z.number().describe('lowest trade on the index markets since we started measuring the asset'),
  atl_change_percentage: z.number().describe('percent from atl to current_price'),
  ath_date: z.string().describe('ISO 8601 time of the trade that first reached ath'),
  sparkline_in_7d: z
    .object({
      price: z
        .array(z.number())
        .describe(
          `index closes (last trade of the hour on the index markets) of the last ${sparklineHours} hours, oldest first, the last one the current hour so far. ` +
            'An hour without a trade repeats the close before it (looked for up to 7 days earlier); hours before the first close found are left out, so the array is shorter while our history is',
        ),
    })
    .optional()
    .describe('only with sparkline=true'),
});
export type CoinRow = z.infer<typeof coinRow>;

const maxLimit = 250;
const coinsQuery = paginationQuery(maxLimit, 100).extend({
  ids: idListParam('comma-separated asset ids: only these, in rank order, paginated like the full list; unknown ids and assets without a price are left out'),
  sparkline: flagParam(`true adds sparkline_in_7d, ${sparklineHours} hourly prices, to each row`),
});

const coinsResponse = z.object({
  coins: z.array(coinRow).describe('by market cap rank; assets without an index price (no trade on an index market in 48 h) are not listed'),
  page: z.number().int().describe('page applied (the one offset falls on, when offset is given)'),
  limit: z.number().int().describe('limit applied'),
  offset: z.number().int().describe('offset applied'),
  at: z.string().describe('ISO 8601 time of the market snapshot the rows come from'),
});

const iso = (ms: number) => new Date(ms).toISOString();
const percent = (now: number, then: number) => (now / then - 1) * 100;

/** A priced asset's row (spec 2.1). */
function coinRowOf(m: PricedMarket, baseUrl: string | undefined): CoinRow {
  return {
    id: m.asset.id,
    symbol: m.asset.symbol,
    name: m.asset.name,
    image: publicUrl(baseUrl, m.asset.image.large),
    current_price: m.price,
    market_cap: m.marketCap,
    fully_diluted_valuation: m.fullyDilutedValuation,
    total_volume: m.volume24h,
    high_24h: m.high24h,
    low_24h: m.low24h,
    market_cap_rank: m.rank,
    price_change_percentage_1h_in_currency: m.change['1h'],
    price_change_percentage_24h_in_currency: m.change['24h'],
    price_change_percentage_7d_in_currency: m.change['7d'],
    price_change_percentage_30d_in_currency: m.change['30d'],
    circulating_supply: m.circulatingSupply,
    total_supply: m.totalSupply,
    max_supply: m.maxSupply,
    measured: m.measured,
    ath: m.ath.price,
    ath_change_percentage: percent(m.price, m.ath.price),
    atl: m.atl.price,
    atl_change_percentage: percent(m.price, m.atl.price),
    ath_date: iso(m.ath.at),
  };
}

/**
 * The last `sparklineHours` hourly index closes per asset, oldest first. An hour without trades
 * repeats the previous close; hours before the first close found are left out.
 */
async function loadSparklines(store: StoreCalls, assets: readonly string[], now: number): Promise<Map<string, number[]>> {
  const currentHour = Math.floor(now / hourMs) * hourMs;
  const firstHour = currentHour - (sparklineHours - 1) * hourMs;
  const closes = await loadIndexCloses(store, 'candles_1h', assets, firstHour - sparklineLookbackMs, now);
  const sparklines = new Map<string, number[]>();
  for (const id of assets) {
    const rows = closes.get(id) ?? [];
    const prices: number[] = [];
    let next = 0;
    let carried: number | undefined;
    for (let hour = firstHour - sparklineLookbackMs; hour <= currentHour; hour += hourMs) {
      while (next < rows.length && rows[next]!.t <= hour) carried = rows[next++]!.close;
      if (hour >= firstHour && carried !== undefined) prices.push(carried);
    }
    sparklines.set(id, prices);
  }
  return sparklines;
}

/** GET /v1/coins (spec 4.2). */
export function coinsRoute(deps: { store: StoreCalls; config: Pick<Config, 'INDEX_STALE_AFTER_MS' | 'STORE_MIN_FREE_MB' | 'PUBLIC_BASE_URL'> }): CachedRoute {
  return {
    path: '/v1/coins',
    refreshSeconds: 30,
    doc: {
      operationId: 'coins',
      tag: 'Coins',
      summary: 'Assets by market cap, with price, volume, changes and supply',
      query: coinsQuery,
      response: coinsResponse,
      errors: [400, 503],
    },
    resolve(req) {
      const { ids, sparkline, ...paging } = parseParams(coinsQuery, req.query);
      const { limit, page, offset } = pageOf(paging);
      const listed = ids ? [...new Set(ids.filter((id) => describeAsset(id)))].sort() : undefined;
      return {
        key: `${limit}|${offset}|${sparkline}|${listed?.join(',') ?? '*'}`,
        build: async () => {
          const { at, priced } = await sharedAssetMarkets(deps.store, measuredRule(deps.config));
          const wanted = listed ? new Set(listed) : undefined;
          const rows = (wanted ? priced.filter((m) => wanted.has(m.asset.id)) : priced)
            .slice(offset, offset + limit)
            .map((m) => coinRowOf(m, deps.config.PUBLIC_BASE_URL));
          if (sparkline) {
            const lines = await loadSparklines(deps.store, rows.map((r) => r.id), at);
            for (const row of rows) row.sparkline_in_7d = { price: lines.get(row.id) ?? [] };
          }
          return { coins: rows, page, limit, offset, at: new Date(at).toISOString() };
        },
      };
    },
  };
}
