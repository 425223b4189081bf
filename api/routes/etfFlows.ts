import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { etfAssetId, etfAssets, etfFundsOf, type EtfAssetId } from '../../infra/reference/etfFunds.ts';
import type { StoreCalls } from '../../infra/store.ts';
import { ApiError } from '../errors.ts';
import type { CachedRoute } from '../responseCache.ts';

const flowsSql = readFileSync(new URL('./etfFlows.sql', import.meta.url), 'utf8');
const updatedAtSql = readFileSync(new URL('./etfFlowsUpdatedAt.sql', import.meta.url), 'utf8');

// Definitions of each window: aggregate/METHODOLOGY.md, "ETF flows" (after methodology.md §7.2).
const windowKeys = ['5d', '1m', '3m', 'ytd', 'sinceLaunch'] as const;
type WindowKey = (typeof windowKeys)[number];

const windowLabels: Record<WindowKey, string> = {
  '5d': 'last 5 trading days',
  '1m': 'trading days in the month up to asOf',
  '3m': 'trading days in the 3 months up to asOf',
  ytd: 'trading days of the calendar year of asOf',
  sinceLaunch: 'every trading day loaded',
};

const etfFundEntry = z.object({
  ticker: z.string(),
  issuer: z.string(),
  name: z.string(),
  launchDate: z.string().describe('first US trading day, YYYY-MM-DD'),
  note: z.string().nullable().describe('what to know about the fund (a converted trust, not a pure spot fund); null when nothing'),
  cumulativeFlow: z.number().nullable().describe('sum of every daily flow loaded for the fund, USD; null when none is loaded'),
});

const windowTotal = z.object({
  window: z.enum(windowKeys),
  label: z.string(),
  from: z.string().describe('first trading day in the window, YYYY-MM-DD'),
  to: z.string().describe('last trading day in the window: asOf'),
  tradingDays: z.number().int().describe('rows of days in the window'),
  total: z.number().describe('sum of every fund over the window, USD; negative = net outflow'),
  byFund: z
    .record(z.string(), z.number().nullable())
    .describe('ticker -> sum of its flows over the window, USD; null when the fund reported nothing in the window'),
});

const etfAssetFlows = z.object({
  asset: etfAssetId.describe('underlying'),
  assetId: z.string().describe('catalog id of the underlying'),
  name: z.string(),
  funds: z.array(etfFundEntry).describe('the columns of grid, in this order'),
  days: z.array(z.string()).describe('US trading days with at least one reported flow, YYYY-MM-DD, oldest first; market holidays are absent'),
  grid: z
    .array(z.array(z.number().nullable()))
    .describe('grid[i][j] = net flow (USD) of funds[j] on days[i]; null when the fund reported nothing that day (never a zero)'),
  dailyTotals: z.array(z.number()).describe('dailyTotals[i] = sum of the non-null cells of grid[i], USD'),
  windowTotals: z.array(windowTotal).describe('one per window: 5d, 1m, 3m, ytd, sinceLaunch; empty when nothing is loaded'),
  asOf: z.string().nullable().describe('latest trading day covered, YYYY-MM-DD; null when nothing is loaded'),
  updatedAt: z.number().int().nullable().describe('unix ms of the import that last changed these flows'),
  source: z.string().nullable().describe('where the loaded numbers come from, as their file names it'),
  simulated: z.boolean().describe('true when the loaded numbers are SIMULATED (demo data), not fund disclosures'),
});
type EtfAssetFlows = z.infer<typeof etfAssetFlows>;

const etfFlowsResponse = z.object({
  assets: z.array(etfAssetFlows).describe('btc, eth, sol'),
  asOf: z.string().describe('latest trading day covered by any asset, YYYY-MM-DD'),
  updatedAt: z.number().int().describe('unix ms of the latest import that changed any flow'),
  simulated: z.boolean().describe('true when any asset\'s numbers are simulated'),
});

interface FlowRow {
  asset: EtfAssetId;
  date: string;
  fund: string;
  flowUsd: number;
  source: string;
  simulated: boolean;
}

/** The date `months` calendar months before `date`, the day clamped to the end of a shorter month. */
export function monthsBefore(date: string, months: number): string {
  const [y, m, d] = date.split('-').map(Number) as [number, number, number];
  const first = new Date(Date.UTC(y, m - 1 - months, 1));
  const lastDay = new Date(Date.UTC(first.getUTCFullYear(), first.getUTCMonth() + 1, 0)).getUTCDate();
  first.setUTCDate(Math.min(d, lastDay));
  return first.toISOString().slice(0, 10);
}

/** Index of the first of `days` (oldest first, last = asOf) inside the window. */
function windowStart(key: WindowKey, days: readonly string[]): number {
  const asOf = days.at(-1)!;
  const firstOnOrAfter = (from: string) => days.findIndex((d) => d >= from);
  const firstAfter = (after: string) => days.findIndex((d) => d > after);
  switch (key) {
    case '5d':
      return Math.max(0, days.length - 5);
    case '1m':
      return firstAfter(monthsBefore(asOf, 1));
    case '3m':
      return firstAfter(monthsBefore(asOf, 3));
    case 'ytd':
      return firstOnOrAfter(`${asOf.slice(0, 4)}-01-01`);
    case 'sinceLaunch':
      return 0;
  }
}

const sumOrNull = (cells: readonly (number | null)[]): number | null =>
  cells.reduce<number | null>((sum, c) => (c === null ? sum : (sum ?? 0) + c), null);

/** Shapes one asset's stored rows (sorted by date) into funds, days, grid and window totals. */
function assetFlows(asset: EtfAssetId, rows: readonly FlowRow[], updatedAt: number | null): EtfAssetFlows {
  const meta = etfAssets.find((a) => a.id === asset)!;
  const funds = etfFundsOf(asset);
  const column = new Map(funds.map((f, j) => [f.ticker, j]));
  const days: string[] = [];
  const grid: (number | null)[][] = [];
  for (const r of rows) {
    const j = column.get(r.fund);
    // A fund taken out of the reference list after its flows were loaded has no column.
    if (j === undefined) continue;
    if (days.at(-1) !== r.date) {
      days.push(r.date);
      grid.push(funds.map(() => null));
    }
    grid.at(-1)![j] = r.flowUsd;
  }
  const dailyTotals = grid.map((cells) => sumOrNull(cells) ?? 0);
  const windowTotals =
    days.length === 0
      ? []
      : windowKeys.map((key) => {
          const start = windowStart(key, days);
          const inWindow = grid.slice(start);
          return {
            window: key,
            label: windowLabels[key],
            from: days[start]!,
            to: days.at(-1)!,
            tradingDays: inWindow.length,
            total: dailyTotals.slice(start).reduce((a, b) => a + b, 0),
            byFund: Object.fromEntries(funds.map((f, j) => [f.ticker, sumOrNull(inWindow.map((cells) => cells[j]!))])),
          };
        });
  const sources = [...new Set(rows.map((r) => r.source))];
  return {
    asset,
    assetId: meta.assetId,
    name: meta.name,
    funds: funds.map((f, j) => ({
      ticker: f.ticker,
      issuer: f.issuer,
      name: f.name,
      launchDate: f.launchDate,
      note: f.note,
      cumulativeFlow: sumOrNull(grid.map((cells) => cells[j]!)),
    })),
    days,
    grid,
    dailyTotals,
    windowTotals,
    asOf: days.at(-1) ?? null,
    updatedAt: days.length === 0 ? null : updatedAt,
    source: sources.length === 0 ? null : sources.join('; '),
    simulated: rows.some((r) => r.simulated),
  };
}

/** The flows of `assets` as the API serves them; assets with nothing loaded have empty days. */
export async function loadEtfFlows(store: StoreCalls, assets: readonly EtfAssetId[]): Promise<EtfAssetFlows[]> {
  const [rows, updated] = await Promise.all([
    store.rows<FlowRow>(flowsSql, { assets }),
    store.rows<{ asset: EtfAssetId; updatedAt: number }>(updatedAtSql, { assets }),
  ]);
  const updatedAt = new Map(updated.map((u) => [u.asset, u.updatedAt]));
  return assets.map((asset) => assetFlows(asset, rows.filter((r) => r.asset === asset), updatedAt.get(asset) ?? null));
}

const doc = {
  tag: 'Indicators',
  query: z.object({}),
} as const;

/** GET /v1/etf-flows (spec 2.9, 4.13): every underlying's funds, daily grid and window totals. */
export function etfFlowsRoute(deps: { store: StoreCalls }): CachedRoute {
  const assets = etfAssetId.options;
  return {
    path: '/v1/etf-flows',
    refreshSeconds: 3600,
    doc: {
      ...doc,
      operationId: 'etfFlows',
      summary: 'US spot ETF net flows of btc, eth and sol: per fund and day, with window totals',
      response: etfFlowsResponse,
      errors: [503],
    },
    resolve() {
      return {
        key: '*',
        build: async () => {
          const flows = await loadEtfFlows(deps.store, assets);
          const loaded = flows.filter((f) => f.asOf !== null);
          if (loaded.length === 0) throw new ApiError(503, 'unavailable', 'ETF flow data is not loaded yet; retry later');
          return {
            assets: flows,
            asOf: loaded.map((f) => f.asOf!).sort().at(-1)!,
            updatedAt: Math.max(...loaded.map((f) => f.updatedAt ?? 0)),
            simulated: loaded.some((f) => f.simulated),
          };
        },
      };
    },
  };
}

/** GET /v1/etf-flows/{asset}: one underlying, the same object as an element of assets[]. */
export function etfAssetFlowsRoute(deps: { store: StoreCalls }): CachedRoute {
  return {
    path: '/v1/etf-flows/:asset',
    refreshSeconds: 3600,
    doc: {
      ...doc,
      operationId: 'etfAssetFlows',
      summary: 'US spot ETF net flows of one underlying',
      path: z.object({ asset: z.string().describe(`underlying: ${etfAssetId.options.join(', ')}`) }),
      response: etfAssetFlows,
      errors: [404, 503],
    },
    resolve(req) {
      const parsed = etfAssetId.safeParse(req.params.asset);
      if (!parsed.success)
        throw new ApiError(404, 'not_found', `no ETF flows for asset ${JSON.stringify(String(req.params.asset))}; assets: ${etfAssetId.options.join(', ')}`);
      const asset = parsed.data;
      return {
        key: asset,
        build: async () => {
          const [flows] = await loadEtfFlows(deps.store, [asset]);
          if (!flows || flows.asOf === null) throw new ApiError(503, 'unavailable', `ETF flow data for ${asset} is not loaded yet; retry later`);
          return flows;
        },
      };
    },
  };
}
