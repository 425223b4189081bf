import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { catalogVenues, findAsset } from '../../infra/catalog/catalog.ts';
import type { StoreCalls } from '../../infra/store.ts';
import { parseParams } from '../errors.ts';
import type { CachedRoute } from '../responseCache.ts';

const sumsSql = readFileSync(new URL('./liquidations.sql', import.meta.url), 'utf8');
const eventsSql = readFileSync(new URL('./liquidationEvents.sql', import.meta.url), 'utf8');

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

interface SumRow {
  kind: 'period' | 'bar' | 'asset' | 'venue' | 'last';
  key: string;
  side: 'long' | 'short' | '';
  usd: number;
  valued: number;
  unvalued: number;
  sampled: number;
  last_ms: number;
}

interface Split {
  long: number;
  short: number;
  valued: number;
  unvalued: number;
  sampled: boolean;
}

const emptySplit = (): Split => ({ long: 0, short: 0, valued: 0, unvalued: 0, sampled: false });
const byTotalThenId = <R extends { total: number }>(id: (r: R) => string) => (a: R, b: R) =>
  b.total - a.total || (id(a) < id(b) ? -1 : id(a) > id(b) ? 1 : 0);

/**
 * The liquidations of the window ending with the current minute (see aggregate/METHODOLOGY.md,
 * "Liquidations"): `to` is the end of the minute `now` falls in, `from` = to - range.
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
  const [sums, events] = await Promise.all([
    store.rows<SumRow>(sumsSql, { prev_s: (from - ms) / 1000, from_s: from / 1000, to_s: to / 1000, bar_s: barMs / 1000, venue }),
    store.rows<LiquidationEventRow>(eventsSql, { from, to, venue, limit: topEventCount }),
  ]);

  const groups = { period: new Map<string, Split>(), bar: new Map<string, Split>(), asset: new Map<string, Split>(), venue: new Map<string, Split>() };
  let updatedAt = 0;
  for (const r of sums) {
    if (r.kind === 'last') {
      updatedAt = r.last_ms;
      continue;
    }
    const group = groups[r.kind];
    const split = group.get(r.key) ?? emptySplit();
    if (r.side === 'long') split.long += r.usd;
    if (r.side === 'short') split.short += r.usd;
    split.valued += r.valued;
    split.unvalued += r.unvalued;
    split.sampled ||= r.sampled > 0;
    group.set(r.key, split);
  }

  const current = groups.period.get('current') ?? emptySplit();
  const previous = groups.period.get('previous') ?? emptySplit();
  const total = current.long + current.short;

  const bars = [];
  for (let t = Math.floor(from / barMs) * barMs; t < to; t += barMs) {
    const bar = groups.bar.get(String(t / 1000));
    bars.push({ t, long: bar?.long ?? 0, short: bar?.short ?? 0 });
  }

  // Rows of a kind exist for quotes we do not value too: breakdowns list only what has a USD figure.
  const assets = [...groups.asset]
    .filter(([, s]) => s.valued > 0)
    .map(([assetId, s]) => ({ assetId, symbol: findAsset(assetId)?.symbol ?? assetId, long: s.long, short: s.short, total: s.long + s.short }))
    .sort(byTotalThenId((r) => r.assetId));
  const venues = [...groups.venue]
    .filter(([, s]) => s.valued > 0)
    .map(([venueId, s]) => ({ venueId, long: s.long, short: s.short, total: s.long + s.short, sampled: s.sampled }))
    .sort(byTotalThenId((r) => r.venueId));

  return {
    long: current.long,
    short: current.short,
    total,
    previousTotal: previous.long + previous.short,
    from,
    to,
    bars,
    assets,
    venues,
    events,
    highlights: {
      largest: events[0] ?? null,
      count: current.valued,
      longShare: total > 0 ? current.long / total : null,
      unvalued: current.unvalued,
    },
    updatedAt,
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
