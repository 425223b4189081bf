import { z } from 'zod';
import { findCategory } from '../../infra/catalog/catalog.ts';
import type { Config } from '../../infra/config.ts';
import type { StoreCalls } from '../../infra/store.ts';
import { measuredRule } from '../../aggregate/indexPrices/latestIndexPrices.ts';
import { loadUsdRates, type UsdRates } from '../../aggregate/currency/usdRates.ts';
import { rateFor, valueCurrencies, type ValueCurrency } from '../currency.ts';
import { ApiError } from '../errors.ts';
import { changeWindowMs, isPriced, rangeWindows, sharedAssetMarkets, type ChangeWindow, type PricedMarket, type RangeWindow } from '../read/assetMarket.ts';
import type { CachedRoute } from '../responseCache.ts';
import { publicUrl } from '../coinImages.ts';
import { namedAsset, servedAsset } from '../read/servedAsset.ts';

/** Currency keys of the date maps (spec 2.2). */
const dateCurrencies = [
  'usd', 'ars', 'brl', 'sek', 'sgd', 'thb', 'try', 'twd', 'uah', 'vnd', 'zar', 'eth',
  'aed', 'aud', 'bdt', 'cad', 'chf', 'clp', 'cny', 'czk', 'dkk', 'eur', 'gbp', 'hkd',
] as const;
const changeWindows = Object.keys(changeWindowMs) as ChangeWindow[];
const rangeLabels: Record<RangeWindow, string> = { '24h': '24 hours', '7d': '7 days', '30d': '30 days', '1y': '1 year' };

const valueMap = (description: string) =>
  z.object(Object.fromEntries(valueCurrencies.map((c) => [c, z.number().describe(c)])) as Record<ValueCurrency, z.ZodNumber>).describe(description);
const dateMap = (description: string) =>
  z.object(Object.fromEntries(dateCurrencies.map((c) => [c, z.string().describe(c)])) as Record<(typeof dateCurrencies)[number], z.ZodString>).describe(description);
const atCurrentRate = 'per currency: our USD figure x the current rate of that currency';

const priceStats = z.object({
  observed_since: z.string().describe('ISO 8601 time of our first measured trade of the asset on an index market'),
  ranges: z
    .array(
      z.object({
        key: z.enum(rangeWindows).describe('window up to now'),
        label: z.string().describe('the window in words'),
        low: valueMap(`lowest trade on the index markets in the window (buckets starting in it: 1 min for 24h, 1 h for 7d and 30d, 1 day for 1y); ${atCurrentRate}`),
        high: valueMap(`highest trade on the index markets in the window, same buckets; ${atCurrentRate}`),
      }),
    )
    .describe('24h, 7d, 30d and 1y'),
  high_all: valueMap(`highest trade on the index markets since we started measuring (all time = our own history); ${atCurrentRate}`),
  low_all: valueMap(`lowest trade on the index markets since we started measuring; ${atCurrentRate}`),
  high_all_at: z.string().describe('ISO 8601 time of the trade that first reached high_all'),
  low_all_at: z.string().describe('ISO 8601 time of the trade that first reached low_all'),
});

const inCurrencyChange = (window: string) =>
  valueMap(
    `percent change over ${window}: the price at the current rate against the reference price (see /v1/coins) at the rate of the reference's time, ` +
      'or at the current rate when no rate is known for that time',
  );

const marketData = z.object({
  current_price: valueMap(`index price (volume-weighted, latest second with trades on the USD, USDT and USDC markets); ${atCurrentRate}`),
  market_cap: valueMap(`current_price x circulating_supply; ${atCurrentRate}`),
  fully_diluted_valuation: valueMap(`current_price x max_supply, or x total_supply when there is no max supply; ${atCurrentRate}`),
  total_volume: valueMap(`traded on the index markets in the last 24 h; ${atCurrentRate}`),
  high_24h: valueMap(`highest trade on the index markets in the last 24 h (the current price when there was none); ${atCurrentRate}`),
  low_24h: valueMap(`lowest trade on the index markets in the last 24 h (the current price when there was none); ${atCurrentRate}`),
  ...(Object.fromEntries(changeWindows.map((w) => [`price_change_percentage_${w}_in_currency`, inCurrencyChange(w)])) as Record<
    `price_change_percentage_${ChangeWindow}_in_currency`,
    ReturnType<typeof valueMap>
  >),
  ath: valueMap(`= price_stats.high_all; ${atCurrentRate}`),
  ath_change_percentage: valueMap('percent from ath to current_price (both at the current rate, so equal in every currency)'),
  atl: valueMap(`= price_stats.low_all; ${atCurrentRate}`),
  atl_change_percentage: valueMap('percent from atl to current_price (both at the current rate, so equal in every currency)'),
  ath_date: dateMap('ISO 8601 time of the ath trade, the same for every currency (values are converted at the current rate)'),
  atl_date: dateMap('ISO 8601 time of the atl trade, the same for every currency'),
  circulating_supply: z.number().describe('catalog supply at the time of the response (issuance schedule where the asset has one)'),
  total_supply: z.number().describe('units that exist now, circulating or not'),
  max_supply: z.number().nullable().describe('null when the asset has no maximum supply, as in the coin row (spec 2.1)'),
  supply_source: z.string().describe('where the supply figures come from'),
  market_cap_change_percentage_24h: z.number().describe('percent, USD market cap against the cap at the 24 h reference (its price x the supply at its time)'),
});

const coinProfile = z.object({
  id: z.string().describe('asset id (catalog slug)'),
  symbol: z.string().describe('ticker, lower case'),
  name: z.string().describe('display name'),
  categories: z.array(z.string()).describe('names of the categories the asset belongs to (their ids are in /v1/categories)'),
  description: z.object({ en: z.string().describe('English, from the catalog') }).describe('what the asset is'),
  image: z
    .object({ thumb: z.string().describe('smallest'), small: z.string().describe('medium'), large: z.string().describe('largest') })
    .describe('logo URLs'),
  links: z
    .object({
      homepage: z.array(z.string()).describe('project web sites'),
      whitepaper: z.string().describe('URL; empty string when none'),
      blockchain_site: z.array(z.string()).describe('block explorers'),
      official_forum_url: z.array(z.string()).describe('forums'),
      chat_url: z.array(z.string()).describe('chat rooms'),
      announcement_url: z.array(z.string()).describe('announcement pages'),
      twitter_screen_name: z.string().describe('X/Twitter handle; empty string when none'),
      facebook_username: z.string().describe('empty string when none'),
      telegram_channel_identifier: z.string().describe('empty string when none'),
      bitcointalk_thread_identifier: z.string().nullable().describe('null when none'),
      subreddit_url: z.string().describe('URL; empty string when none'),
      snapshot_url: z.string().nullable().describe('governance space; null when none'),
      repos_url: z
        .object({ github: z.array(z.string()).describe('GitHub repositories'), bitbucket: z.array(z.string()).describe('Bitbucket repositories') })
        .describe('source code'),
    })
    .describe('from the catalog'),
  platforms: z.record(z.string(), z.string()).describe('platform name -> contract address; empty for a native coin'),
  detail_platforms: z
    .record(z.string(), z.object({ decimal_place: z.string().nullable().describe('token decimals, null when unknown'), contract_address: z.string().describe('token contract on that platform') }))
    .describe('platform name -> contract details; empty for a native coin'),
  hashing_algorithm: z.string().describe('proof-of-work algorithm; empty string where none applies (proof-of-stake chains, tokens)'),
  genesis_date: z.string().describe('YYYY-MM-DD; empty string when the catalog has none (e.g. tokens)'),
  market_cap_rank: z.number().int().describe('1-based, by market cap among the assets with a price'),
  watchlist_portfolio_users: z.number().int().describe('always 0: the service has no watchlists or portfolios'),
  price_source: z.string().describe('what the price is measured from'),
  price_stats: priceStats.describe('what we measured of the price since we started, in the value-map currencies'),
  market_data: marketData.describe('market figures; value maps keyed usd, ars, brl, sek (converted at the current rate unless said otherwise)'),
});
export type CoinProfile = z.infer<typeof coinProfile>;

const coinPath = z.object({ id: z.string().describe('asset id, e.g. bitcoin') });
const iso = (ms: number) => new Date(ms).toISOString();

/**
 * The rate of each value currency at `at`: the current rates are required (503 naming the
 * currency otherwise, never an unconverted number).
 */
function valueRates(rates: UsdRates): Record<ValueCurrency, number> {
  return Object.fromEntries(valueCurrencies.map((c) => [c, rateFor(rates, c).rate])) as Record<ValueCurrency, number>;
}

/** The profile of a priced asset (spec 2.2). */
async function buildProfile(store: StoreCalls, m: PricedMarket, now: number, priceSource: string, baseUrl: string | undefined): Promise<CoinProfile> {
  const rates = valueRates(await loadUsdRates(store, now));
  const map = (usd: number) => Object.fromEntries(valueCurrencies.map((c) => [c, usd * rates[c]])) as Record<ValueCurrency, number>;
  // Rates at the reference times, loaded once per distinct time.
  const ratesAt = new Map<number, Promise<UsdRates>>();
  const referenceRates = (at: number) => ratesAt.get(at) ?? ratesAt.set(at, loadUsdRates(store, at)).get(at)!;
  const changes = await Promise.all(
    changeWindows.map(async (w) => {
      const ref = m.reference[w];
      const then = await referenceRates(ref.at);
      const change = Object.fromEntries(
        valueCurrencies.map((c) => [c, ((m.price * rates[c]) / (ref.price * (then.perUsd(c) ?? rates[c])) - 1) * 100]),
      ) as Record<ValueCurrency, number>;
      return [`price_change_percentage_${w}_in_currency`, change] as const;
    }),
  );
  const same = (value: number) => Object.fromEntries(valueCurrencies.map((c) => [c, value])) as Record<ValueCurrency, number>;
  const sameDate = (ms: number) => Object.fromEntries(dateCurrencies.map((c) => [c, iso(ms)])) as Record<(typeof dateCurrencies)[number], string>;
  const { asset } = m;
  return {
    id: asset.id,
    symbol: asset.symbol,
    name: asset.name,
    categories: asset.categories.map((id) => findCategory(id)?.name ?? id),
    description: { en: asset.description },
    image: { thumb: publicUrl(baseUrl, asset.image.thumb), small: publicUrl(baseUrl, asset.image.small), large: publicUrl(baseUrl, asset.image.large) },
    links: asset.links,
    platforms: Object.fromEntries(Object.entries(asset.platforms).map(([name, p]) => [name, p.contract_address])),
    detail_platforms: Object.fromEntries(
      Object.entries(asset.platforms).map(([name, p]) => [name, { decimal_place: p.decimal_place === null ? null : String(p.decimal_place), contract_address: p.contract_address }]),
    ),
    hashing_algorithm: asset.hashing_algorithm ?? '',
    genesis_date: asset.genesis_date ?? '',
    market_cap_rank: m.rank,
    watchlist_portfolio_users: 0,
    price_source: priceSource,
    price_stats: {
      observed_since: iso(m.observedSince),
      ranges: rangeWindows.map((w) => ({ key: w, label: rangeLabels[w], low: map(m.ranges[w].low), high: map(m.ranges[w].high) })),
      high_all: map(m.ath.price),
      low_all: map(m.atl.price),
      high_all_at: iso(m.ath.at),
      low_all_at: iso(m.atl.at),
    },
    market_data: {
      current_price: map(m.price),
      market_cap: map(m.marketCap),
      fully_diluted_valuation: map(m.fullyDilutedValuation),
      total_volume: map(m.volume24h),
      high_24h: map(m.high24h),
      low_24h: map(m.low24h),
      ...(Object.fromEntries(changes) as Record<`price_change_percentage_${ChangeWindow}_in_currency`, Record<ValueCurrency, number>>),
      ath: map(m.ath.price),
      ath_change_percentage: same((m.price / m.ath.price - 1) * 100),
      atl: map(m.atl.price),
      atl_change_percentage: same((m.price / m.atl.price - 1) * 100),
      ath_date: sameDate(m.ath.at),
      atl_date: sameDate(m.atl.at),
      circulating_supply: m.circulatingSupply,
      total_supply: m.totalSupply,
      max_supply: m.maxSupply,
      supply_source: m.supplySource,
      market_cap_change_percentage_24h: m.marketCapChange24h,
    },
  };
}

/** GET /v1/coins/{id} (spec 4.3). */
export function coinRoute(deps: { store: StoreCalls; config: Pick<Config, 'INDEX_STALE_AFTER_MS' | 'STORE_MIN_FREE_MB' | 'MDS_SIMULATED' | 'PUBLIC_BASE_URL'> }): CachedRoute {
  const priceSource = `mds:index (volume-weighted trades on USD, USDT and USDC markets${deps.config.MDS_SIMULATED ? '; simulated market' : ''})`;
  return {
    path: '/v1/coins/:id',
    refreshSeconds: 60,
    doc: {
      operationId: 'coin',
      tag: 'Coins',
      summary: 'One asset: catalog profile, price statistics and market data',
      path: coinPath,
      query: z.object({}),
      response: coinProfile,
      errors: [404, 503],
    },
    resolve(req) {
      const requested = String(req.params.id);
      namedAsset(requested);
      return {
        key: requested,
        build: async () => {
          // An alias (a discovered asset joined into another) answers for the asset it joined.
          const { id } = await servedAsset(deps.store, requested);
          const { at, markets } = await sharedAssetMarkets(deps.store, measuredRule(deps.config));
          const m = markets.find((x) => x.asset.id === id);
          // Every figure of market_data is a number in the spec: without a measured price there is nothing honest to put there.
          if (!m || !isPriced(m)) {
            throw new ApiError(503, 'unavailable', `no index price for ${id} yet (no trade on a USD, USDT or USDC market in the last 48 h); retry later`);
          }
          return buildProfile(deps.store, m, at, priceSource, deps.config.PUBLIC_BASE_URL);
        },
      };
    },
  };
}
