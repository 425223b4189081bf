import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { loadUsdQuoteRates, usdQuoteParams } from '../../aggregate/currency/usdRates.ts';
import type { StoreCalls } from '../../infra/store.ts';
import { parseParams } from '../errors.ts';
import { capAtReference, loadAssetMarkets, longWindowCacheOf, universeCapChange, type AssetMarket } from '../read/assetMarket.ts';
import type { CachedRoute } from '../responseCache.ts';

const windowStartSql = readFileSync(new URL('./marketStatusWindowStart.sql', import.meta.url), 'utf8');
const referencePricesSql = readFileSync(new URL('./marketStatusReferencePrices.sql', import.meta.url), 'utf8');
const volumesSql = readFileSync(new URL('./marketStatusVolumes.sql', import.meta.url), 'utf8');

const dayMs = 86_400_000;
const minuteMs = 60_000;
/** The basket: the top assets by market cap (aggregate/METHODOLOGY.md, "Market status"). */
export const basketSize = 100;
/** A 24 h change within ± this many percent counts as flat (research/methodology.md 6). */
export const flatBandPercent = 0.5;
/** Altcoin season: this many assets after exclusions, over this many days (research/methodology.md 5). */
export const altcoinUniverseSize = 50;
export const altcoinWindowDays = 90;
/** An asset whose first price in the window comes later than this after its start lacks the history to be compared. */
export const referenceToleranceMs = 60 * minuteMs;

const altcoinLabels = ['Altcoin Season', 'Neutral', 'Bitcoin Season'] as const;
export type AltcoinSeasonLabel = (typeof altcoinLabels)[number];

export function altcoinSeasonLabel(score: number): AltcoinSeasonLabel {
  return score >= 75 ? 'Altcoin Season' : score <= 25 ? 'Bitcoin Season' : 'Neutral';
}

export const marketStatusResponse = z.object({
  basket: z
    .object({
      up: z.number().int().describe(`assets whose 24 h price change is above +${flatBandPercent} %`),
      down: z.number().int().describe(`assets whose 24 h price change is below -${flatBandPercent} %`),
      flat: z.number().int().describe(`assets within ±${flatBandPercent} %`),
      assets: z.number().int().describe(`assets counted: the top ${basketSize} by market cap that have a 24 h change`),
      flatBandPercent: z.number().describe('half-width of the flat band, percent'),
    })
    .describe(`the top ${basketSize} assets by market cap, by direction of their 24 h price change`),
  marketCapChange24h: z.number().nullable().describe('percent change of the total market cap over 24 h, over the assets priced both now and 24 h ago (as /v1/global); null while our history is shorter than 24 h'),
  volumeChange24h: z.number().nullable().describe('percent change of USD volume (index markets), last 24 h vs the 24 h before, over the assets that traded in both; null without data'),
  btcSharePointsChange24h: z.number().nullable().describe('change of BTC dominance (share of that total market cap) over 24 h, percentage points'),
  altcoinSeason: z.object({
    score: z.number().int().min(0).max(100).nullable().describe('percent of the compared assets whose price rose more (or fell less) than BTC over the window; null when none can be compared'),
    label: z.enum(altcoinLabels).nullable().describe('>= 75 Altcoin Season, <= 25 Bitcoin Season, otherwise Neutral'),
    windowDays: z.number().nullable().describe(`days the performance is measured over: ${altcoinWindowDays}, or fewer while our history is shorter`),
    fullWindow: z.boolean().describe(`true when windowDays is the full ${altcoinWindowDays} days`),
    assets: z.number().int().describe('assets compared with BTC'),
    outperforming: z.number().int().describe('of those, how many beat BTC'),
    excludedShortHistory: z.number().int().describe('top assets left out because they have no price at the start of the window'),
  }).describe(`the top ${altcoinUniverseSize} by market cap excluding BTC, stablecoins and wrapped or staked tokens, against BTC`),
  asOf: z.string().describe('ISO 8601 time of the latest trade behind the prices (the build time when there is none)'),
});
export type MarketStatusResponse = z.infer<typeof marketStatusResponse>;


function basketOf(markets: readonly AssetMarket[]): MarketStatusResponse['basket'] {
  const changes = markets
    .slice(0, basketSize)
    .map((m) => m.change['24h'])
    .filter((c): c is number => c !== null);
  return {
    up: changes.filter((c) => c > flatBandPercent).length,
    down: changes.filter((c) => c < -flatBandPercent).length,
    flat: changes.filter((c) => c >= -flatBandPercent && c <= flatBandPercent).length,
    assets: changes.length,
    flatBandPercent,
  };
}

/**
 * BTC's share of the total market cap now minus 24 h ago, in points, both over the one universe
 * /v1/global's 24 h change uses: assets with a cap truly 24 h old (capAtReference).
 */
function btcSharePointsChange(markets: readonly AssetMarket[], now: number): number | null {
  let totalNow = 0;
  let totalBefore = 0;
  let btc: { now: number; before: number } | undefined;
  for (const m of markets) {
    const before = capAtReference(m, '24h', now);
    if (before === null || m.marketCap === null) continue;
    totalNow += m.marketCap;
    totalBefore += before;
    if (m.asset.id === 'bitcoin') btc = { now: m.marketCap, before };
  }
  if (!btc || !(totalNow > 0 && totalBefore > 0)) return null;
  return (100 * btc.now) / totalNow - (100 * btc.before) / totalBefore;
}

async function altcoinSeason(store: StoreCalls, markets: readonly AssetMarket[], now: number): Promise<MarketStatusResponse['altcoinSeason']> {
  const btc = markets.find((m) => m.asset.id === 'bitcoin');
  const candidates = markets
    .filter((m) => m.asset.id !== 'bitcoin' && !m.asset.stablecoin && !m.asset.wrapped && m.price !== null && m.marketCap !== null)
    .slice(0, altcoinUniverseSize);
  const none = { score: null, label: null, windowDays: null, fullWindow: false, assets: 0, outperforming: 0, excludedShortHistory: 0 };
  if (!btc?.price || candidates.length === 0) return none;

  const [start] = await store.rows<{ second: number }>(windowStartSql, { from_s: Math.floor((now - altcoinWindowDays * dayMs) / 1000) });
  if (!start) return none;
  const startMs = start.second * 1000;
  const references = await store.rows<{ asset: string; price: number }>(referencePricesSql, {
    assets: ['bitcoin', ...candidates.map((m) => m.asset.id)],
    from_s: start.second,
    to_s: Math.floor((startMs + referenceToleranceMs) / 1000),
  });
  const reference = new Map(references.map((r) => [r.asset, r.price]));
  const btcReference = reference.get('bitcoin');
  if (btcReference === undefined) return none;
  const btcReturn = btc.price / btcReference - 1;
  const compared = candidates.filter((m) => reference.has(m.asset.id));
  const outperforming = compared.filter((m) => m.price! / reference.get(m.asset.id)! - 1 > btcReturn).length;
  const score = compared.length ? Math.round((100 * outperforming) / compared.length) : null;
  const windowDays = (now - startMs) / dayMs;
  return {
    score,
    label: score === null ? null : altcoinSeasonLabel(score),
    windowDays: Math.round(windowDays * 1000) / 1000,
    // The window start is the first BTC second at or after now - 90 days: within the tolerance, it is the full window.
    fullWindow: startMs - (now - altcoinWindowDays * dayMs) <= referenceToleranceMs,
    assets: compared.length,
    outperforming,
    excludedShortHistory: candidates.length - compared.length,
  };
}

async function volumeChange(store: StoreCalls, now: number): Promise<number | null> {
  const lastMinute = Math.floor(now / minuteMs) * minuteMs;
  const rows = await store.rows<{ asset: string; current: number; previous: number }>(volumesSql, {
    last_s: lastMinute / 1000,
    split_s: (lastMinute - dayMs) / 1000,
    from_s: (lastMinute - 2 * dayMs) / 1000,
    ...usdQuoteParams(await loadUsdQuoteRates(store, now)),
  });
  // Only assets that traded in both days: a listing or an outage is not a change in activity.
  const both = rows.filter((r) => r.current > 0 && r.previous > 0);
  const previous = both.reduce((a, r) => a + r.previous, 0);
  return previous > 0 ? (both.reduce((a, r) => a + r.current, 0) / previous - 1) * 100 : null;
}

/** The market status (spec 2.9) at `now`, from the asset snapshot and our index history. */
export async function loadMarketStatus(store: StoreCalls, now: number): Promise<MarketStatusResponse> {
  const markets = await loadAssetMarkets(store, now, { longWindows: longWindowCacheOf(store) });
  const [season, volume] = await Promise.all([altcoinSeason(store, markets, now), volumeChange(store, now)]);
  const latest = Math.max(...markets.map((m) => m.updatedAt ?? 0));
  return {
    basket: basketOf(markets),
    marketCapChange24h: universeCapChange(markets, '24h', now),
    volumeChange24h: volume,
    btcSharePointsChange24h: btcSharePointsChange(markets, now),
    altcoinSeason: season,
    asOf: new Date(latest > 0 ? latest : now).toISOString(),
  };
}

/** GET /v1/market-status (spec 4.14). */
export function marketStatusRoute(deps: { store: StoreCalls }): CachedRoute {
  const query = z.object({});
  return {
    path: '/v1/market-status',
    refreshSeconds: 60,
    doc: {
      operationId: 'marketStatus',
      tag: 'Indicators',
      summary: 'Up/down/flat basket, 24 h market cap, volume and BTC share changes, altcoin season',
      query,
      response: marketStatusResponse,
      errors: [],
    },
    resolve(req) {
      parseParams(query, req.query);
      return { key: '*', build: () => loadMarketStatus(deps.store, Date.now()) };
    },
  };
}
