import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { findAsset, type CatalogAsset } from '../../infra/catalog/catalog.ts';
import type { Config } from '../../infra/config.ts';
import { latestIndexPrices, measuredRule, percentChange } from '../../aggregate/indexPrices/latestIndexPrices.ts';
import type { StoreCalls } from '../../infra/store.ts';
import { loadCandles } from '../read/candleSeries.ts';
import type { CachedRoute } from '../responseCache.ts';
import { assetIdentityRoute } from './assetIdentity.ts';
import { ProcessStatusReader, type ProcessStatus, type ProcessStatusSources } from './processStatus.ts';

const sql = (name: string) => readFileSync(new URL(`./${name}.sql`, import.meta.url), 'utf8');
const venueConnectionsSql = sql('venueConnections');
const venueTradesSql = sql('venueTrades');
const venueGapsSql = sql('venueGaps');
/** Gaps of missed trades are shown over this window. */
const gapsLookbackS = 86_400;
const sparklinesSql = sql('sparklines');
const exclusionsSql = sql('exclusions');
const indexLagSql = sql('indexLag');

/** Trade rates are over this window; a venue's last trade is looked for this far back. */
const tradeRateWindowS = 60;
const lastTradeLookbackS = 600;
/** Sparkline: the last 15 minutes, one point per 10 s. */
const sparklineWindowS = 900;
const sparklineStepS = 10;
/** Candle chart: the last hour of 1m candles. */
const candleCount = 60;
/** Exclusions the index runner made in the last 2 minutes (it judges every market each second), at most 50 listed. */
const exclusionWindowMs = 120_000;
const exclusionLimit = 50;

const ms = z.number().int().describe('unix ms');
const nullableNumber = z.number().nullable();

const statusAsset = z.object({
  assetId: z.string(),
  symbol: z.string(),
  name: z.string(),
  price: z.number().nullable().describe('USD index price of the latest second computed; null while the asset has none'),
  change24h: z.number().nullable(),
  measured: z.boolean(),
  updatedAt: nullableNumber.describe('unix ms of the last trade behind the price'),
  sparkline: z.array(z.tuple([ms, z.number()])).describe('[unix ms, USD index price] over the last 15 minutes, oldest first'),
});

const statusVenue = z.object({
  venue: z.string(),
  state: z.enum(['connected', 'partial', 'disconnected']).describe('from the latest status of each market in the store; from this process when the store has none yet'),
  markets: z.number().int().describe('markets with a connection status in the store'),
  connectedMarkets: z.number().int(),
  tradesPerSecond: z.number().describe('trades stored over the last minute, per second'),
  lastTradeAt: nullableNumber.describe('last stored trade in the last 10 minutes'),
  gaps: z
    .object({
      open: z.number().int().describe('being recovered from the venue now'),
      unrecovered: z.number().int().describe('ended partly recovered or unrecoverable (trade_gaps says why)'),
      recoveredTrades: z.number().int().describe("trades recovered from the venue's REST history"),
    })
    .describe('gaps of missed trades whose last state came in the last 24 h (a socket down, a restart, an overload)'),
  process: z
    .object({
      connected: z.boolean(),
      messagesPerSecond: z.number().nullable(),
      lastMessageAgeMs: z.number().nullable(),
      resyncs: z.number(),
      bookBufferOverflows: z.number().describe("book update buffers started over at their bound while a REST snapshot was awaited: the venue's snapshots are behind its stream"),
      reconnects: z.number(),
    })
    .nullable()
    .describe("the collector's own counters: only in the process that runs it"),
});

export const statusResponse = z.object({
  at: ms,
  simulated: z.boolean(),
  assets: z.array(statusAsset),
  venues: z.array(statusVenue),
  pipeline: z.object({
    tradesPerSecond: z.number().describe('trades stored over the last minute, per second, every venue'),
    indexLagMs: nullableNumber.describe('how far the newest index second is behind now; null without one in the last hour'),
    insertedRowsPerSecond: nullableNumber.describe('rows this process inserts per second (every table); null in a process without the aggregator'),
    busLag: z.array(z.object({ group: z.string(), topic: z.string(), records: z.number() })).nullable().describe('records not yet committed, per consumer group; null where no bus runs'),
    checks: z.array(z.object({ name: z.string(), ok: z.boolean(), reason: z.string().nullable() })).nullable().describe("this process's /ready checks"),
  }),
  exclusions: z.object({
    total: z.number().int(),
    markets: z.array(z.object({ asset: z.string(), venue: z.string(), market: z.string(), reason: z.string() })),
  }),
});
export type StatusResponse = z.infer<typeof statusResponse>;

export const statusCandlesResponse = z.object({
  at: ms,
  candles: z.record(z.string(), z.array(z.object({ timestamp: ms, open: z.number(), high: z.number(), low: z.number(), close: z.number() }))).describe('per asset id, the last hour of 1m index candles, oldest first'),
});
export type StatusCandlesResponse = z.infer<typeof statusCandlesResponse>;

export interface StatusDeps {
  store: StoreCalls;
  config: Pick<Config, 'STATUS_ASSETS' | 'INDEX_STALE_AFTER_MS' | 'STORE_MIN_FREE_MB' | 'MDS_SIMULATED' | 'OPS_ALLOWED_HOSTS' | 'PUBLIC_BASE_URL'>;
  process?: ProcessStatusSources;
}

/** STATUS_ASSETS as catalog assets; an unknown id is a configuration error, found at start. */
export function statusAssets(ids: readonly string[]): CatalogAsset[] {
  return ids.map((id) => {
    const asset = findAsset(id);
    if (!asset) throw new Error(`STATUS_ASSETS: no asset with id ${JSON.stringify(id)} in the catalog`);
    return asset;
  });
}

/** How far the newest index second in the last hour is behind `now` (ms); undefined without one. */
export async function loadIndexLagMs(store: StoreCalls, now: number): Promise<number | undefined> {
  const [row] = await store.rows<{ latest: number }>(indexLagSql);
  return row ? now - (row.latest + 1) * 1000 : undefined;
}

/** Every venue with a connection status or a gap in the store, or a collector here; and the trades stored per second, every venue. */
async function loadVenues(store: StoreCalls, now: number, inProcess: ProcessStatus | undefined): Promise<{ venues: StatusResponse['venues']; tradesPerSecond: number }> {
  const nowS = Math.floor(now / 1000);
  const [connections, trades, gapRows] = await Promise.all([
    store.rows<{ venue: string; markets: number; connectedMarkets: number }>(venueConnectionsSql),
    store.rows<{ venue: string; trades: number; lastTradeAt: number }>(venueTradesSql, { from_s: nowS - lastTradeLookbackS, rate_from_s: nowS - tradeRateWindowS }),
    store.rows<{ venue: string; open: number; unrecovered: number; recoveredTrades: number }>(venueGapsSql, { from_s: nowS - gapsLookbackS }),
  ]);
  const gapsOf = new Map(gapRows.map((g) => [g.venue, { open: Number(g.open), unrecovered: Number(g.unrecovered), recoveredTrades: Number(g.recoveredTrades) }]));
  const connectionsOf = new Map(connections.map((c) => [c.venue, c]));
  const tradesOf = new Map(trades.map((t) => [t.venue, t]));
  const ids = new Set([...connectionsOf.keys(), ...(inProcess?.venues.keys() ?? []), ...gapsOf.keys()]);
  const venues = [...ids].sort().map((venue) => {
    const stored = connectionsOf.get(venue);
    const here = inProcess?.venues.get(venue) ?? null;
    const markets = Number(stored?.markets ?? 0);
    const connectedMarkets = Number(stored?.connectedMarkets ?? 0);
    const state: StatusResponse['venues'][number]['state'] = stored
      ? connectedMarkets === markets ? 'connected' : connectedMarkets === 0 ? 'disconnected' : 'partial'
      : here?.connected ? 'connected' : 'disconnected';
    const traded = tradesOf.get(venue);
    return {
      venue,
      state,
      markets,
      connectedMarkets,
      tradesPerSecond: Number(traded?.trades ?? 0) / tradeRateWindowS,
      lastTradeAt: traded ? Number(traded.lastTradeAt) : null,
      gaps: gapsOf.get(venue) ?? { open: 0, unrecovered: 0, recoveredTrades: 0 },
      process: here,
    };
  });
  return { venues, tradesPerSecond: trades.reduce((sum, t) => sum + Number(t.trades), 0) / tradeRateWindowS };
}

async function loadAssets(deps: StatusDeps, assets: readonly CatalogAsset[], now: number): Promise<StatusResponse['assets']> {
  const ids = assets.map((a) => a.id);
  const [latest, points] = await Promise.all([
    latestIndexPrices(deps.store, ids, now, measuredRule(deps.config)),
    deps.store.rows<{ asset: string; t: number; price: number }>(sparklinesSql, { assets: ids, from_s: Math.floor(now / 1000) - sparklineWindowS, step_s: sparklineStepS }),
  ]);
  return assets.map((asset) => {
    const p = latest.get(asset.id);
    return {
      assetId: asset.id,
      symbol: asset.symbol,
      name: asset.name,
      price: p?.price ?? null,
      change24h: p ? percentChange(p.price, p.reference['24h'].price) : null,
      measured: p?.measured ?? false,
      updatedAt: p?.updatedAt ?? null,
      sparkline: points.filter((r) => r.asset === asset.id).map((r) => [Number(r.t), r.price] as [number, number]),
    };
  });
}

async function loadExclusions(store: StoreCalls, now: number): Promise<StatusResponse['exclusions']> {
  const rows = await store.rows<{ asset: string; venue: string; market: string; reason: string; total: number }>(exclusionsSql, { from_ms: now - exclusionWindowMs, limit: exclusionLimit });
  return { total: Number(rows[0]?.total ?? 0), markets: rows.map(({ asset, venue, market, reason }) => ({ asset, venue, market, reason })) };
}

/**
 * The two public endpoints of the status page (README "Status page"): `/status.json`, rebuilt at
 * most once a second whoever asks, and `/status/candles.json`, every 10 s (its candle read grows
 * with history). Prices and candles only of STATUS_ASSETS; venues, pipeline and exclusions are
 * operational data without prices.
 */
export function statusRoutes(deps: StatusDeps): CachedRoute[] {
  const assets = statusAssets(deps.config.STATUS_ASSETS);
  const processReader = deps.process && new ProcessStatusReader(deps.process);
  const status: CachedRoute = {
    path: '/status.json',
    refreshSeconds: 1,
    doc: { operationId: 'status', tag: 'Market', summary: 'Public status page data', query: z.object({}), response: statusResponse, errors: [503] },
    resolve: () => ({
      key: 'status',
      build: async (): Promise<StatusResponse> => {
        const now = Date.now();
        const inProcess = await processReader?.read(now);
        const [assetRows, { venues, tradesPerSecond }, indexLagMs, exclusions] = await Promise.all([
          loadAssets(deps, assets, now),
          loadVenues(deps.store, now, inProcess),
          loadIndexLagMs(deps.store, now),
          loadExclusions(deps.store, now),
        ]);
        return {
          at: now,
          simulated: deps.config.MDS_SIMULATED,
          assets: assetRows,
          venues,
          pipeline: {
            tradesPerSecond,
            indexLagMs: indexLagMs ?? null,
            insertedRowsPerSecond: inProcess?.insertedRowsPerSecond ?? null,
            busLag: inProcess?.busLag ?? null,
            checks: inProcess?.checks ?? null,
          },
          exclusions,
        };
      },
    }),
  };
  const candles: CachedRoute = {
    path: '/status/candles.json',
    refreshSeconds: 10,
    doc: { operationId: 'statusCandles', tag: 'Market', summary: 'Public status page candles', query: z.object({}), response: statusCandlesResponse, errors: [503] },
    resolve: () => ({
      key: 'candles',
      build: async (): Promise<StatusCandlesResponse> => {
        const now = Date.now();
        const loaded = await Promise.all(assets.map((a) => loadCandles(deps.store, a.id, '1m', now)));
        return {
          at: now,
          candles: Object.fromEntries(assets.map((a, i) => [a.id, loaded[i]!.slice(-candleCount).map(({ timestamp, open, high, low, close }) => ({ timestamp, open, high, low, close }))])),
        };
      },
    }),
  };
  return [status, candles, assetIdentityRoute(deps)];
}
