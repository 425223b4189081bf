// Requests to compute an asset's index again (table index_recompute_requests): written by what stores
// trades without the aggregator's sinks, whose onInserted tells the index runner of late trades
// itself (a discovered asset joined into another: aggregate/jobs/identityJoins.ts); read by the
// index runner, which goes back for each asset as it does for late trades.
import type { Store } from '../infra/store.ts';

export interface IndexRecomputeRequest {
  asset: string;
  /** unix ms of the earliest trade that changed. */
  fromMs: number;
  /** unix ms it was asked at. */
  requestedAt: number;
}

/** Asks the index runner to compute `asset` again from `fromMs` (unix ms) on. */
export async function requestIndexRecompute(store: Store, asset: string, fromMs: number, reason: string, now = Date.now()): Promise<void> {
  await store.insert('index_recompute_requests', [{ asset, from_ts: fromMs, reason, requested_at: now }]);
}

const requestsSql = `
SELECT asset, toUnixTimestamp64Milli(from_ts) AS fromMs, toUnixTimestamp64Milli(requested_at) AS requestedAt
FROM index_recompute_requests
WHERE requested_at > fromUnixTimestamp64Milli({since:Int64}, 'UTC')
ORDER BY requested_at`;

/** The requests written after `sinceMs` (unix ms), oldest first. */
export async function loadIndexRecomputeRequests(store: Store, sinceMs: number): Promise<IndexRecomputeRequest[]> {
  const rows = await store.rows<{ asset: string; fromMs: number | string; requestedAt: number | string }>(requestsSql, { since: sinceMs });
  return rows.map((r) => ({ asset: r.asset, fromMs: Number(r.fromMs), requestedAt: Number(r.requestedAt) }));
}
