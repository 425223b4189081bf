// Where a collector's recovery starts after a restart: the last trade the store holds of each of
// a venue's markets. Read from market_seconds (a row per market and second, far smaller than
// trades) for the latest second, then from trades for that market's trades of its last millisecond.
import type { StoreCalls } from '../infra/store.ts';
import type { FoundGap, GapCause } from './tradeGaps.ts';
import type { HistoryCursor } from './venue.ts';

/** The last stored trade of each market of each venue, within `withinMs` of `now`: venue -> market symbol -> cursor. */
export async function lastStoredTrades(
  store: StoreCalls,
  venues: readonly { id: string; history?: { seqOf?(tradeId: string): number | undefined } }[],
  withinMs: number,
  now = Date.now(),
): Promise<Map<string, Map<string, HistoryCursor>>> {
  const out = new Map<string, Map<string, HistoryCursor>>();
  if (venues.length === 0) return out;
  const latest = await store.rows<{ venue: string; market: string; asset: string; ts: number }>(
    `SELECT venue, market, asset, toUnixTimestamp64Milli(max(last_trade_at)) AS ts FROM market_seconds
     WHERE venue IN {venues:Array(String)} AND second >= toDateTime(intDiv({from:Int64}, 1000), 'UTC')
     GROUP BY venue, market, asset`,
    { venues: venues.map((v) => v.id), from: now - withinMs },
  );
  for (const { venue, market, asset, ts } of latest) {
    const ids = await store.rows<{ id: string }>(
      `SELECT trade_id AS id FROM trades
       WHERE asset = {asset:String} AND venue = {venue:String} AND market = {market:String} AND ts = fromUnixTimestamp64Milli({ts:Int64}, 'UTC')`,
      { asset, venue, market, ts },
    );
    const seqOf = venues.find((v) => v.id === venue)?.history?.seqOf;
    const cursor = lastOf(ids.map((r) => r.id), ts, seqOf);
    if (!cursor) continue;
    let markets = out.get(venue);
    if (!markets) out.set(venue, (markets = new Map()));
    markets.set(market, cursor);
  }
  return out;
}

/** Of the trades at the last millisecond: the one with the highest number where ids carry one, else any. */
function lastOf(ids: readonly string[], ts: number, seqOf: ((tradeId: string) => number | undefined) | undefined): HistoryCursor | undefined {
  if (ids.length === 0) return undefined;
  let best: HistoryCursor = { ts, tradeId: ids[0]! };
  for (const tradeId of ids) {
    const seq = seqOf?.(tradeId);
    if (seq !== undefined && (best.seq === undefined || seq > best.seq)) best = { ts, tradeId, seq };
  }
  return best;
}

/**
 * Gaps a previous run left to recover again, within `withinMs` of `now`: those it opened and did
 * not end (its process died while it recovered them), and those that ended in the last
 * `endedWithinMs` of which the store lacks recovered trades: they may have been on the in-process
 * bus when it died (a recovered trade can be older than live trades already stored, so the last
 * stored trade does not cover it). An ended gap whose trades are all stored costs no request to
 * the venue again. Recovering one again stores only what the table lacks. Only gaps opened before
 * `openedBefore` (an earlier run's; see watchLateGaps). Venue -> gaps, each with its id and its
 * highest version.
 */
export async function unfinishedGaps(store: StoreCalls, venueIds: readonly string[], withinMs: number, now = Date.now(), endedWithinMs = 10 * 60_000, openedBefore = now): Promise<Map<string, FoundGap[]>> {
  const found = await store.rows<UnfinishedGapRow>(
    `SELECT venue, market, any(asset) AS asset, gap_id AS gapId, toString(any(cause)) AS cause,
            toUnixTimestamp64Milli(min(from_ts)) AS fromTs, toUnixTimestamp64Milli(max(to_ts)) AS toTs, any(from_seq) AS fromSeq, any(to_seq) AS toSeq,
            max(version) AS maxVersion, toString(argMax(state, version)) AS lastState, argMax(recovered, version) AS lastRecovered
     FROM trade_gaps
     WHERE venue IN {venues:Array(String)} AND ts >= fromUnixTimestamp64Milli({from:Int64}, 'UTC')
     GROUP BY venue, market, gap_id
     HAVING (lastState = 'open' OR max(ts) >= fromUnixTimestamp64Milli({endedFrom:Int64}, 'UTC')) AND min(ts) < fromUnixTimestamp64Milli({openedBefore:Int64}, 'UTC')`,
    { venues: venueIds, from: now - withinMs, endedFrom: now - endedWithinMs, openedBefore },
  );
  const rows = await withoutStoredEnded(store, found);
  const out = new Map<string, FoundGap[]>();
  for (const r of rows) {
    const numbered = r.fromSeq !== null && r.toSeq !== null;
    const gap: FoundGap = {
      symbol: r.market,
      cause: r.cause,
      gapId: r.gapId,
      versionBase: Number(r.maxVersion),
      after: { ts: Number(r.fromTs), ...(numbered ? { seq: Number(r.fromSeq) - 1 } : {}) },
      until: { ts: Number(r.toTs), ...(numbered ? { seq: Number(r.toSeq) + 1 } : {}) },
      ...(numbered ? { missing: { first: Number(r.fromSeq), last: Number(r.toSeq) } } : {}),
    };
    const list = out.get(r.venue);
    if (list) list.push(gap);
    else out.set(r.venue, [gap]);
  }
  return out;
}

interface UnfinishedGapRow {
  venue: string;
  market: string;
  asset: string;
  gapId: string;
  cause: GapCause;
  fromTs: number;
  toTs: number;
  fromSeq: number | null;
  toSeq: number | null;
  maxVersion: number;
  lastState: string;
  lastRecovered: number;
}

/**
 * Leaves out the gaps that ended recovered with every trade they recovered in the store: it holds as
 * many trades strictly inside the gap as the gap recovered. Every trade strictly inside was missed
 * live, so what the store holds there is a subset of what was recovered; a trade of a bound's
 * millisecond is not counted, which can only send a gap to the venue again, never skip one. Gaps
 * ended short (refused, beyond reach) are tried again as they were.
 */
async function withoutStoredEnded(store: StoreCalls, gaps: readonly UnfinishedGapRow[]): Promise<UnfinishedGapRow[]> {
  const recovered = gaps.filter((g) => g.lastState === 'recovered');
  const counted = recovered.filter((g) => Number(g.lastRecovered) > 0);
  /** Trades the store holds strictly inside each counted gap. */
  const stored = new Map<UnfinishedGapRow, number>();
  if (counted.length > 0) {
    const counts = await store.rows<{ i: number; n: number }>(
      `SELECT g.i AS i, uniqExact(t.trade_id) AS n
       FROM (SELECT tupleElement(x, 1) AS i, tupleElement(x, 2) AS asset, tupleElement(x, 3) AS venue, tupleElement(x, 4) AS market,
                    fromUnixTimestamp64Milli(tupleElement(x, 5), 'UTC') AS from_ts, fromUnixTimestamp64Milli(tupleElement(x, 6), 'UTC') AS to_ts
             FROM (SELECT arrayJoin(arrayZip(arrayEnumerate({gapAssets:Array(String)}), {gapAssets:Array(String)}, {gapVenues:Array(String)}, {gapMarkets:Array(String)}, {gapFroms:Array(Int64)}, {gapTos:Array(Int64)})) AS x)) AS g
       INNER JOIN (SELECT asset, venue, market, ts, trade_id FROM trades
                   WHERE asset IN {assets:Array(String)} AND ts > fromUnixTimestamp64Milli({from:Int64}, 'UTC') AND ts < fromUnixTimestamp64Milli({to:Int64}, 'UTC')) AS t
         ON t.asset = g.asset AND t.venue = g.venue AND t.market = g.market
       WHERE t.ts > g.from_ts AND t.ts < g.to_ts
       GROUP BY i`,
      {
        gapAssets: counted.map((g) => g.asset),
        gapVenues: counted.map((g) => g.venue),
        gapMarkets: counted.map((g) => g.market),
        gapFroms: counted.map((g) => Number(g.fromTs)),
        gapTos: counted.map((g) => Number(g.toTs)),
        assets: [...new Set(counted.map((g) => g.asset))],
        from: Math.min(...counted.map((g) => Number(g.fromTs))),
        to: Math.max(...counted.map((g) => Number(g.toTs))),
      },
    );
    // arrayEnumerate counts from 1.
    for (const { i, n } of counts) stored.set(counted[Number(i) - 1]!, Number(n));
  }
  const complete = new Set(recovered.filter((g) => Number(g.lastRecovered) === 0 || (stored.get(g) ?? 0) >= Number(g.lastRecovered)));
  return gaps.filter((g) => !complete.has(g));
}
