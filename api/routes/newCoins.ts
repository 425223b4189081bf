import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { assetUniverse } from '../../infra/catalog/assetUniverse.ts';
import { describeAsset } from '../../infra/catalog/discovered.ts';
import type { Config } from '../../infra/config.ts';
import { loadUsdQuoteRates, usdQuoteParams } from '../../aggregate/currency/usdRates.ts';
import { latestIndexPrices, measuredRule, type MeasuredRule } from '../../aggregate/indexPrices/latestIndexPrices.ts';
import type { StoreCalls } from '../../infra/store.ts';
import { parseParams } from '../errors.ts';
import type { CachedRoute } from '../responseCache.ts';
import { publicUrl } from '../coinImages.ts';

const listingsSql = readFileSync(new URL('./newCoins.sql', import.meta.url), 'utf8');
const volumeSql = readFileSync(new URL('./newCoinsVolume.sql', import.meta.url), 'utf8');

const hourMs = 3_600_000;
const dayMs = 24 * hourMs;
/** An asset is new for this long after its listing (our observation). */
export const newForMs = 30 * dayMs;
/**
 * First prints within this long of a venue's own first print in our store are not listings: when
 * we start collecting a venue, every asset it trades prints for the first time (METHODOLOGY.md).
 */
export const defaultListingWarmupMs = 24 * hourMs;

const maxLimit = 200;
const newCoinsQuery = z.object({
  limit: z.coerce
    .number({ error: 'must be an integer' })
    .int('must be an integer')
    .min(1, `must be 1 to ${maxLimit}`)
    .max(maxLimit, `must be 1 to ${maxLimit}`)
    .default(maxLimit)
    .describe('rows, newest listing first'),
});

/** New coin (spec 2.8). */
const newCoin = z.object({
  id: z.string(),
  symbol: z.string(),
  name: z.string(),
  image: z.string().describe('logo URL (the large catalog image)'),
  listedAt: z.number().int().describe('unix ms of its first trade on any venue we track'),
  firstVenue: z.string().describe('venue id of that first trade'),
  price: z.number().nullable().describe('USD index price (as /v1/prices); null when it has none in the last 48 h'),
  changeSinceListing: z
    .number()
    .nullable()
    .describe('percent change of price from its first trade in a USD, USDT or USDC market; null without a price or without such a trade'),
  volume24h: z.number().describe('USD volume of the last 24 h, markets quoted in USD or a USD stablecoin (at its measured rate, as the index)'),
  measured: z.boolean().describe("as in /v1/prices: true while price comes from trades (not carried by the fail-closed rule), its last trade is at most INDEX_STALE_AFTER_MS old, and the store's disk has at least STORE_MIN_FREE_MB free"),
});
export type NewCoin = z.infer<typeof newCoin>;

export const newCoinsResponse = z.object({
  coins: z.array(newCoin).describe('assets first traded on a tracked venue in the last 30 days of our observation, newest first'),
  stats: z.object({
    listed24h: z.number().int().describe('listings in the last 24 h'),
    listed7d: z.number().int().describe('listings in the last 7 days'),
    listed30d: z.number().int().describe('listings in the last 30 days'),
    observedSince: z.number().int().nullable().describe('unix ms of the first trade we hold on any venue: windows before it are not observed; null when none'),
  }),
});
export type NewCoinsResponse = z.infer<typeof newCoinsResponse>;

interface ListingRow {
  asset: string;
  listedAt: number;
  firstVenue: string;
  venueStartedAt: number;
  firstUsdPrice: number;
}

/** USD volume of the last 24 h per asset, its USD stablecoin quotes at their measured rates (as the index). */
async function loadVolumes(store: StoreCalls, assets: readonly string[], now: number): Promise<{ asset: string; volume24h: number }[]> {
  return store.rows(volumeSql, { assets, from_s: Math.floor((now - dayMs) / 1000), ...usdQuoteParams(await loadUsdQuoteRates(store, now)) });
}

/** The new coins at `now`, newest first, the first `limit` of them (see METHODOLOGY.md, "Listings"). */
export async function loadNewCoins(
  store: StoreCalls,
  options: { limit: number; now: number; warmupMs: number; measured: MeasuredRule; baseUrl?: string | undefined },
): Promise<NewCoinsResponse> {
  const { limit, now, warmupMs, measured, baseUrl } = options;
  const [listings, [observed], universe] = await Promise.all([
    store.rows<ListingRow>(listingsSql, { warmup_ms: warmupMs, since_ms: now - newForMs }),
    store.rows<{ first: number; pairs: number }>('SELECT toUnixTimestamp64Milli(min(first_ts)) AS first, count() AS pairs FROM asset_first_prints'),
    assetUniverse(store),
  ]);
  // Trades carry catalog ids and discovered ones; anything else has no name or image to show. A
  // discovered asset as the universe serves it (named as its venue lists it), by its own id.
  const known = listings.flatMap((l) => {
    const served = universe.find(l.asset);
    const asset = served?.id === l.asset ? served : describeAsset(l.asset);
    return asset ? [{ ...l, asset }] : [];
  });
  const shown = known.slice(0, limit);
  const ids = shown.map((l) => l.asset.id);
  const [priceOf, volumes] = await Promise.all([latestIndexPrices(store, ids, now, measured), ids.length === 0 ? [] : loadVolumes(store, ids, now)]);
  const volumeOf = new Map(volumes.map((v) => [v.asset, v.volume24h]));

  const coins = shown.map(({ asset, listedAt, firstVenue, firstUsdPrice }): NewCoin => {
    const price = priceOf.get(asset.id);
    return {
      id: asset.id,
      symbol: asset.symbol,
      name: asset.name,
      image: publicUrl(baseUrl, asset.image.large),
      listedAt,
      firstVenue,
      price: price?.price ?? null,
      changeSinceListing: price && firstUsdPrice > 0 ? (price.price / firstUsdPrice - 1) * 100 : null,
      volume24h: volumeOf.get(asset.id) ?? 0,
      measured: price?.measured ?? false,
    };
  });
  const listedSince = (ms: number) => known.filter((l) => l.listedAt >= now - ms).length;
  return {
    coins,
    stats: {
      listed24h: listedSince(dayMs),
      listed7d: listedSince(7 * dayMs),
      listed30d: listedSince(newForMs),
      observedSince: observed && observed.pairs > 0 ? observed.first : null,
    },
  };
}

/** GET /v1/new-coins (spec 4.12). */
export function newCoinsRoute(deps: {
  store: StoreCalls;
  config: Pick<Config, 'INDEX_STALE_AFTER_MS' | 'STORE_MIN_FREE_MB' | 'PUBLIC_BASE_URL'>;
  listingWarmupMs?: number;
}): CachedRoute {
  return {
    path: '/v1/new-coins',
    refreshSeconds: 300,
    doc: {
      operationId: 'newCoins',
      tag: 'Market',
      summary: 'Assets first traded on a tracked venue in the last 30 days, newest first',
      query: newCoinsQuery,
      response: newCoinsResponse,
      errors: [400],
    },
    resolve(req) {
      const { limit } = parseParams(newCoinsQuery, req.query);
      return {
        key: String(limit),
        build: () =>
          loadNewCoins(deps.store, {
            limit,
            now: Date.now(),
            warmupMs: deps.listingWarmupMs ?? defaultListingWarmupMs,
            measured: measuredRule(deps.config),
            baseUrl: deps.config.PUBLIC_BASE_URL,
          }),
      };
    },
  };
}
