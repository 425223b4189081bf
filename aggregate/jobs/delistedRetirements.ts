// Retires a discovered asset whose markets all left its venue's listing (infra/catalog/CATALOG.md,
// "A ticker a venue gives another asset"): a discovered id names a ticker on a venue, and a venue
// may list that ticker again later for another asset. A day after the delisting, the asset's whole
// history is joined into an id of its own, `<ticker>--<venue>--<YYYYMMDD>` (the day of the
// delisting), as an operator's mapping joins it (identityJoins.ts), with the old id recorded as
// an alias of reason `delisted`. A later listing of the ticker then starts a new asset under the
// old id, with its own first print, instead of continuing the old one's history and candles.
import { parseDiscoveredId, retiredAssetId } from '../../infra/catalog/discovered.ts';
import type { Job } from '../../infra/jobs.ts';
import type { Logger } from '../../infra/log.ts';
import type { Store } from '../../infra/store.ts';
import { joinIdentity, type JoinOutcome } from './identityJoins.ts';

/**
 * How long every market of the asset stays out of the listing before it is retired: a market a
 * venue suspends for maintenance, or a listing that missed it once, comes back within hours. A day
 * also keeps two retirements of one id from falling on one day (one id each).
 */
export const retireAfterMs = 24 * 3_600_000;

/**
 * Discovered assets whose markets' latest statuses all say delisted, the last of them at or before
 * `before`. A market listed again since has a later status (connected, or down), so its asset is
 * not due; retired ids are left out by the caller.
 */
const delistedSql = `
SELECT asset, venue, toUnixTimestamp64Milli(max(last_ts)) AS delisted_at
FROM (
    SELECT asset, venue, market, argMax(delisted, ts) AS delisted, max(ts) AS last_ts
    FROM market_connections
    WHERE position(asset, '--') > 0
    GROUP BY asset, venue, market
)
GROUP BY asset, venue
HAVING min(delisted) = 1 AND max(last_ts) <= fromUnixTimestamp64Milli({before:Int64})
ORDER BY asset`;

export interface DelistedAsset {
  asset: string;
  venue: string;
  /** The last of its markets' delisting statuses, unix ms. */
  delistedAt: number;
  /** The id it is retired under (`<ticker>--<venue>--<YYYYMMDD>`). */
  retired: string;
}

/** The discovered assets due for retirement at `now`. */
export async function delistedAssets(store: Store, now = Date.now()): Promise<DelistedAsset[]> {
  const rows = await store.rows<{ asset: string; venue: string; delisted_at: number | string }>(delistedSql, { before: now - retireAfterMs });
  return rows.flatMap((r) => {
    const delistedAt = Number(r.delisted_at);
    const retired = retiredAssetId(r.asset, delistedAt);
    return retired ? [{ asset: r.asset, venue: r.venue, delistedAt, retired }] : [];
  });
}

/** Retires each discovered asset due at `now`; logs what moved. */
export async function retireDelistedAssets(store: Store, log: Logger, now = Date.now(), signal?: AbortSignal): Promise<JoinOutcome[]> {
  const outcomes: JoinOutcome[] = [];
  for (const delisted of await delistedAssets(store, now)) {
    if (signal?.aborted) break;
    const origin = parseDiscoveredId(delisted.asset)!;
    // The id's ticker slug as the mapping's ticker: its id is the asset's own again.
    const outcome = await joinIdentity(store, { venue: origin.venue, ticker: origin.ticker, asset: delisted.retired, scale: 1 }, undefined, 'delisted');
    if (!outcome) continue;
    outcomes.push(outcome);
    log.info({ ...outcome, delistedAt: new Date(delisted.delistedAt).toISOString() }, 'discovered asset retired: its markets left the venue\'s listing a day ago; its history is kept under the retired id, and a later listing of the ticker is a new asset');
  }
  return outcomes;
}

/** Every 10 minutes (and at start): a retirement waits a day after the delisting, minutes do not matter. */
export const delistedRetirementsJob: Job = {
  name: 'delisted-retirements',
  everyMs: 10 * 60_000,
  async run({ store, log, signal }) {
    await retireDelistedAssets(store, log, Date.now(), signal);
  },
};
