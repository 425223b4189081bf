import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { catalogVenues } from '../../infra/catalog/catalog.ts';
import { describeAsset } from '../../infra/catalog/discovered.ts';
import type { StoreCalls } from '../../infra/store.ts';
import { parseParams } from '../errors.ts';
import type { CachedRoute } from '../responseCache.ts';

const windowSql = readFileSync(new URL('./liquidationWindow.sql', import.meta.url), 'utf8');
const beforeSql = readFileSync(new URL('./liquidations.sql', import.meta.url), 'utf8');

const minuteMs = 60_000;
const hourMs = 60 * minuteMs;
const dayMs = 24 * hourMs;

/** The spec's windows (4.16) and the width of the UTC-aligned bars we cut each into. */
export const liquidationRanges = {
  '1h': { ms: hourMs, barMs: 5 * minuteMs },
  '4h': { ms: 4 * hourMs, barMs: 15 * minuteMs },
  '12h': { ms: 12 * hourMs, barMs: 30 * minuteMs },
  '24h': { ms: dayMs, barMs: hourMs },
  '7d': { ms: 7 * dayMs, barMs: 4 * hourMs },
  '30d': { ms: 30 * dayMs, barMs: dayMs },
} as const;
export type LiquidationRange = keyof typeof liquidationRanges;
const rangeIds = Object.keys(liquidationRanges) as [LiquidationRange, ...LiquidationRange[]];

/** Largest single liquidations listed in events[]. */
export const topEventCount = 20;

const venueIds = catalogVenues.map((v) => v.id) as [string, ...string[]];

const liquidationsQuery = z.object({
  range: z
    .enum(rangeIds, { error: `must be one of ${rangeIds.join(', ')}` })
    .default('24h')
    .describe('window ending now, at one-minute resolution; the previous window of the same length gives previousTotal'),
  venue: z
    .enum(venueIds, { error: `must be a known exchange id: ${venueIds.join(', ')}` })
    .optional()
    .describe('restrict to one exchange id; a venue without a liquidation feed answers with zeros'),
});

const usd = (what: string) => z.number().describe(`USD liquidated: ${what}`);

const liquidationEventRow = z.object({
  assetId: z.string(),
  venueId: z.string(),
  market: z.string().describe("the venue's symbol"),
  positionSide: z.enum(['long', 'short']).describe('the position that was closed'),
  price: z.number().describe('in the quote currency of the market'),
  quantity: z.number().describe('base asset units'),
  valueUsd: z.number().describe('price x quantity, USD (USDT and USDC quotes at par)'),
  ts: z.number().int().describe('unix ms, venue time'),
});
export type LiquidationEventRow = z.infer<typeof liquidationEventRow>;

export const liquidationsResponse = z.object({
  long: usd('long positions closed in the window'),
  short: usd('short positions closed in the window'),
  total: usd('long + short'),
  previousTotal: usd('the window of the same length just before'),
  from: z.number().int().describe('unix ms, start of the window (inclusive, a whole UTC minute)'),
  to: z.number().int().describe('unix ms, end of the window (exclusive): the end of the current minute'),
  bars: z
    .array(z.object({ t: z.number().int().describe('unix ms, start of the UTC-aligned bar'), long: z.number(), short: z.number() }))
    .describe('every bar overlapping the window, oldest first, zeros included; bars 5m (1h), 15m (4h), 30m (12h), 1h (24h), 4h (7d), 1d (30d); the first bar counts only its part inside the window, so the bars sum to long and short'),
  assets: z
    .array(z.object({ assetId: z.string(), symbol: z.string(), long: z.number(), short: z.number(), total: z.number() }))
    .describe('assets with USD-valued liquidations in the window, largest total first'),
  venues: z
    .array(
      z.object({
        venueId: z.string(),
        long: z.number(),
        short: z.number(),
        total: z.number(),
        sampled: z.boolean().describe('true when the venue publishes a sample of its liquidations (Binance: one per symbol per second): its figures are lower bounds'),
      }),
    )
    .describe('venues with USD-valued liquidations in the window, largest total first'),
  events: z.array(liquidationEventRow).describe(`the ${topEventCount} largest single liquidations of the window, largest first`),
  highlights: z.object({
    largest: liquidationEventRow.nullable().describe('the largest single liquidation of the window; null when none'),
    count: z.number().int().describe('USD-valued liquidations in the window'),
    longShare: z.number().nullable().describe('long / total, 0 to 1; null when total is 0'),
    unvalued: z.number().int().describe('liquidations in the window on quotes we do not value in USD; in no total'),
  }),
  updatedAt: z.number().int().describe('unix ms of the newest liquidation stored (venue time) before the end of the window, for this venue filter, whenever it happened; 0 when none ever was'),
});
export type LiquidationsResponse = z.infer<typeof liquidationsResponse>;

/** The stored tuple of one of the largest liquidations (liquidationWindow.sql), in its sort order. */
type LargestTuple = [negValueUsd: number, negTs: number, venueId: string, market: string, id: string, assetId: string, positionSide: 'long' | 'short', price: number, quantity: number];

interface WindowRow {
  kind: 'bar' | 'asset' | 'venue' | 'all';
  key: string;
  side: 'long' | 'short' | '';
  usd: number;
  valued: number;
  unvalued: number;
  sampled: number;
  last_ms: number;
  largest: LargestTuple[];
}

interface Split {
  long: number;
  short: number;
  valued: number;
  sampled: boolean;
}

const byTotalThenId = <R extends { total: number }>(id: (r: R) => string) => (a: R, b: R) =>
  b.total - a.total || (id(a) < id(b) ? -1 : id(a) > id(b) ? 1 : 0);

/** The long and short USD of each key of one kind of row, its USD-valued count and (for the venues) `sampled`. */
function splitsOf(rows: readonly WindowRow[], kind: WindowRow['kind']): Map<string, Split> {
  const splits = new Map<string, Split>();
  for (const r of rows) {
    if (r.kind !== kind) continue;
    const split = splits.get(r.key) ?? { long: 0, short: 0, valued: 0, sampled: false };
    if (r.side === 'long') split.long += r.usd;
    if (r.side === 'short') split.short += r.usd;
    split.valued += r.valued;
    split.sampled ||= r.sampled > 0;
    splits.set(r.key, split);
  }
  return splits;
}

/** A breakdown (assets or venues): the keys with a USD figure, largest total first. */
function breakdownOf<R extends { total: number }>(splits: Map<string, Split>, row: (key: string, s: Split) => R, id: (r: R) => string): R[] {
  // A key with liquidations on unvalued quotes only has no USD figure: it is not listed.
  return [...splits].filter(([, s]) => s.valued > 0).map(([key, s]) => row(key, s)).sort(byTotalThenId(id));
}

const eventOf = ([negValueUsd, negTs, venueId, market, , assetId, positionSide, price, quantity]: LargestTuple): LiquidationEventRow => ({
  assetId,
  venueId,
  market,
  positionSide,
  price,
  quantity,
  valueUsd: -negValueUsd,
  ts: -negTs,
});

/**
 * The liquidations of the window ending with the current minute (see aggregate/METHODOLOGY.md,
 * "Liquidations"): `to` is the end of the minute `now` falls in, `from` = to - range. Every figure
 * of the window comes from one scan of it (liquidationWindow.sql): long and short are the sums of
 * the bars, so that totals, bars, breakdowns, counts and events agree. The window before it
 * (previousTotal) and the newest liquidation before it are a second read of what lies outside.
 */
export async function loadLiquidations(
  store: StoreCalls,
  params: { range: LiquidationRange; venue?: string | undefined },
  now: number,
): Promise<LiquidationsResponse> {
  const { ms, barMs } = liquidationRanges[params.range];
  const to = Math.floor(now / minuteMs) * minuteMs + minuteMs;
  const from = to - ms;
  const venue = params.venue ?? '';
  const [rows, [before]] = await Promise.all([
    store.rows<WindowRow>(windowSql, { from, to, bar_s: barMs / 1000, venue, limit: topEventCount }),
    store.rows<{ previous_usd: number; last_ms: number }>(beforeSql, { prev_s: (from - ms) / 1000, from_s: from / 1000, venue }),
  ]);
  const all = rows.find((r) => r.kind === 'all');

  const barSplits = splitsOf(rows, 'bar');
  const bars = [];
  for (let t = Math.floor(from / barMs) * barMs; t < to; t += barMs) {
    const bar = barSplits.get(String(t / 1000));
    bars.push({ t, long: bar?.long ?? 0, short: bar?.short ?? 0 });
  }
  const long = bars.reduce((sum, b) => sum + b.long, 0);
  const short = bars.reduce((sum, b) => sum + b.short, 0);
  const total = long + short;
  const events = (all?.largest ?? []).map(eventOf);
  const assets = breakdownOf(
    splitsOf(rows, 'asset'),
    (assetId, s) => ({ assetId, symbol: describeAsset(assetId)?.symbol ?? assetId, long: s.long, short: s.short, total: s.long + s.short }),
    (r) => r.assetId,
  );
  const venues = breakdownOf(splitsOf(rows, 'venue'), (venueId, s) => ({ venueId, long: s.long, short: s.short, total: s.long + s.short, sampled: s.sampled }), (r) => r.venueId);

  return {
    long,
    short,
    total,
    previousTotal: before?.previous_usd ?? 0,
    from,
    to,
    bars,
    assets,
    venues,
    events,
    highlights: {
      largest: events[0] ?? null,
      count: all?.valued ?? 0,
      longShare: total > 0 ? long / total : null,
      unvalued: all?.unvalued ?? 0,
    },
    // The newest in the window when there is one: the same scan as the figures.
    updatedAt: all && all.valued + all.unvalued > 0 ? all.last_ms : (before?.last_ms ?? 0),
  };
}

/** GET /v1/liquidations (spec 4.16). */
export function liquidationsRoute(deps: { store: StoreCalls }): CachedRoute {
  return {
    path: '/v1/liquidations',
    refreshSeconds: 30,
    doc: {
      operationId: 'liquidations',
      tag: 'Indicators',
      summary: 'Forced liquidations on the derivatives venues we stream: totals, bars, breakdowns and the largest',
      query: liquidationsQuery,
      response: liquidationsResponse,
      errors: [400],
    },
    resolve(req) {
      const { range, venue } = parseParams(liquidationsQuery, req.query);
      return {
        key: `${range}|${venue ?? ''}`,
        build: () => loadLiquidations(deps.store, { range, venue }, Date.now()),
      };
    },
  };
}
