// GET /status/assets.json (operator data): every discovered asset, the assets sharing its ticker
// (scale prefixes read off) and what their prices say, by the rules of aggregate/assetIdentity.ts.
// `npm run assets` prints it. Nothing is merged: this is what an operator reads to curate the catalog.
import { z } from 'zod';
import { identityReport, samePriceBound, scaledTicker, type IdentityMember } from '../../aggregate/assetIdentity.ts';
import { usdQuotes } from '../../aggregate/currency/currencies.ts';
import { assetUniverse } from '../../infra/catalog/assetUniverse.ts';
import { discoveredAssetId, parseDiscoveredId } from '../../infra/catalog/discovered.ts';
import { identities } from '../../infra/catalog/identities.ts';
import type { StoreCalls } from '../../infra/store.ts';
import type { CachedRoute } from '../responseCache.ts';

const candidate = z.object({
  id: z.string(),
  unitPrice: z.number().nullable().describe('USD price of one unit of the asset over its USD-quoted markets in the last 24 h (a retired asset: in the last 24 h it traded), volume-weighted (a scaled ticker: the listed price over its scale); null when it did not trade there'),
  deviation: z.number().nullable().describe('larger unit price over the smaller, minus one; null when either has no price'),
  verdict: z.enum(['agrees', 'disagrees', 'unpriced']),
});

const identityRow = z.object({
  id: z.string().describe('discovered asset id: ticker--venue, or ticker--venue--YYYYMMDD for one retired when its markets left the listing'),
  venue: z.string().nullable(),
  ticker: z.string().describe('ticker as the venue lists it, lower case'),
  base: z.object({ ticker: z.string(), scale: z.number() }).describe('the asset\'s own ticker and how many of it one listed unit is (1000pepe: pepe x 1000)'),
  unitPrice: z.number().nullable(),
  candidates: z.array(candidate).describe('catalog and discovered assets with the same base ticker'),
  decided: z.boolean().describe('apart by the operator\'s decision (the identities file\'s `apart`), whatever the prices say'),
  delistedOn: z.string().nullable().describe('a retired id: the day (YYYY-MM-DD) its markets left the venue\'s listing; its unit price is of its last 24 h of trading. Null for a listed asset'),
  state: z.enum(['distinct', 'ambiguous', 'apart']).describe('distinct: no other asset has its ticker; ambiguous: another has and the prices agree or cannot be compared (kept apart until the catalog maps it); apart: every other one disagrees beyond the bound'),
});

const assetIdentityResponse = z.object({
  at: z.number().int(),
  bound: z.number().describe('relative price difference beyond which two markets are not one asset'),
  counts: z.object({ discovered: z.number().int(), distinct: z.number().int(), ambiguous: z.number().int(), apart: z.number().int() }),
  assets: z.array(identityRow).describe('ambiguous first, then apart, then distinct'),
});
export type AssetIdentityResponse = z.infer<typeof assetIdentityResponse>;

/**
 * Each asset's market price: volume-weighted over its markets quoted in USD or a USD stablecoin (at
 * par: the bound is far wider than a stablecoin's drift) over the last 24 h, perpetuals included:
 * the index leaves perpetuals out, but a perpetual's price says as much about what the asset is.
 */
const marketPricesSql = `
SELECT asset, sum(quote_volume) / sum(volume) AS price
FROM candles_1m
WHERE asset IN {assets:Array(String)} AND quote IN {usd_quotes:Array(String)} AND bucket >= fromUnixTimestamp64Milli({from_ms:Int64})
GROUP BY asset
HAVING sum(volume) > 0`;

/**
 * A retired asset's price likewise, over the last 24 h it traded (it trades no more): what the
 * ticker's new listing is compared with.
 */
const lastDayPricesSql = `
SELECT c.asset AS asset, sum(c.quote_volume) / sum(c.volume) AS price
FROM candles_1m AS c
INNER JOIN (SELECT asset, max(bucket) AS last FROM candles_1m WHERE asset IN {assets:Array(String)} GROUP BY asset) AS l ON l.asset = c.asset
WHERE c.asset IN {assets:Array(String)} AND c.quote IN {usd_quotes:Array(String)} AND c.bucket > l.last - INTERVAL 1 DAY
GROUP BY c.asset
HAVING sum(c.volume) > 0`;

/** The members the rules compare: every discovered asset, and the catalog assets whose symbol is one of their base tickers. */
async function loadMembers(store: StoreCalls, now: number): Promise<IdentityMember[]> {
  const { assets } = await assetUniverse(store);
  const discovered = assets.flatMap((a) => {
    const origin = parseDiscoveredId(a.id);
    return origin ? [{ id: a.id, ...origin }] : [];
  });
  const bases = new Set(discovered.map((d) => scaledTicker(d.ticker).ticker));
  const catalog = assets.filter((a) => !parseDiscoveredId(a.id) && bases.has(a.symbol));
  const retired = discovered.filter((d) => d.delistedOn).map((d) => d.id);
  const [rows, retiredRows] = await Promise.all([
    store.rows<{ asset: string; price: number }>(marketPricesSql, {
      assets: [...discovered.filter((d) => !d.delistedOn).map((d) => d.id), ...catalog.map((a) => a.id)],
      usd_quotes: usdQuotes,
      from_ms: now - dayMs,
    }),
    retired.length > 0 ? store.rows<{ asset: string; price: number }>(lastDayPricesSql, { assets: retired, usd_quotes: usdQuotes }) : [],
  ]);
  const prices = new Map([...rows, ...retiredRows].map((r) => [r.asset, r.price]));
  // A decision on a venue's ticker holds for its retired ids too: the operator looked at that ticker.
  const decidedApart = new Set(identities.apart.map((a) => discoveredAssetId(a.venue, a.ticker)));
  const priceOf = (id: string) => prices.get(id) ?? null;
  return [
    ...catalog.map((a): IdentityMember => ({ id: a.id, kind: 'catalog', venue: null, ticker: a.symbol, scale: 1, price: priceOf(a.id) })),
    ...discovered.map(
      (d): IdentityMember => ({
        id: d.id,
        kind: 'discovered',
        venue: d.venue,
        ticker: d.ticker,
        scale: scaledTicker(d.ticker).scale,
        price: priceOf(d.id),
        decidedApart: decidedApart.has(discoveredAssetId(d.venue, d.ticker)),
        ...(d.delistedOn ? { delistedOn: d.delistedOn } : {}),
      }),
    ),
  ];
}

const dayMs = 86_400_000;

export function assetIdentityRoute(deps: { store: StoreCalls }): CachedRoute {
  return {
    path: '/status/assets.json',
    refreshSeconds: 30,
    doc: { operationId: 'statusAssets', tag: 'Market', summary: 'Discovered assets and the ones sharing their ticker (operator data)', query: z.object({}), response: assetIdentityResponse, errors: [503] },
    resolve: () => ({
      key: 'assets',
      build: async (): Promise<AssetIdentityResponse> => {
        const at = Date.now();
        const rows = identityReport(await loadMembers(deps.store, at));
        const count = (state: string) => rows.filter((r) => r.state === state).length;
        return {
          at,
          bound: samePriceBound,
          counts: { discovered: rows.length, distinct: count('distinct'), ambiguous: count('ambiguous'), apart: count('apart') },
          assets: rows,
        };
      },
    }),
  };
}
