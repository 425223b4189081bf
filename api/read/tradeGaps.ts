import { z } from 'zod';
import type { StoreCalls } from '../../infra/store.ts';

/** The unrecovered gaps of an asset's markets named in a response (its schema is the OpenAPI's). */
export const gapSpansSchema = z
  .array(
    z.object({
      venue: z.string().describe('venue id'),
      market: z.string().describe("the venue's market symbol"),
      from: z.number().int().describe('unix ms: the last trade we hold before the gap'),
      to: z.number().int().describe('unix ms: the first trade we hold after it (or when it was closed)'),
      state: z.enum(['open', 'partly_recovered', 'unrecoverable']).describe('open: recovery under way; partly_recovered, unrecoverable: see reason'),
      reason: z.string().optional().describe('why trades of it are not back: beyond_rest_reach, venue_refused, no_rest_history'),
    }),
  )
  .describe(
    'Spans of the asset\'s markets within the window whose trades we missed and could not (yet) recover from the venue, ' +
      'which makes coverage partial; at most 100, oldest first. Recovered gaps are not listed (trade_gaps in infra/SCHEMA.md keeps them all)',
  );
export type GapSpans = z.infer<typeof gapSpansSchema>;

/** Spans named at most in one response. */
const maxSpans = 100;

/**
 * The gaps of `asset`'s markets overlapping [from, to) whose latest state is not `recovered`: a
 * window that holds one lacks trades we know of and could not get back.
 */
export async function unrecoveredGaps(store: StoreCalls, asset: string, from: number, to: number): Promise<GapSpans> {
  const rows = await store.rows<{ venue: string; market: string; from: number; to: number; state: GapSpans[number]['state']; reason: string }>(
    `SELECT venue, market, toUnixTimestamp64Milli(min(from_ts)) AS from, toUnixTimestamp64Milli(max(to_ts)) AS to,
            argMax(state, version) AS state, argMax(reason, version) AS reason
     FROM trade_gaps
     WHERE asset = {asset:String}
       AND from_ts < fromUnixTimestamp64Milli({to:Int64}, 'UTC') AND to_ts > fromUnixTimestamp64Milli({from:Int64}, 'UTC')
     GROUP BY venue, market, gap_id
     HAVING state != 'recovered'
     ORDER BY from, venue, market
     LIMIT {limit:UInt32}`,
    { asset, from, to, limit: maxSpans },
  );
  return rows.map((r) => ({ venue: r.venue, market: r.market, from: Number(r.from), to: Number(r.to), state: r.state, ...(r.reason ? { reason: r.reason } : {}) }));
}
