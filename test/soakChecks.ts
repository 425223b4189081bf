// What the soak checks in the store once the service stopped: every trade the simulated venues
// printed is stored once, or lies inside a gap the collectors recorded with its reason; and no
// index second was lost. Expected values come from the simulator, never from the service.
import { findVenue } from '../infra/catalog/catalog.ts';
import type { Store } from '../infra/store.ts';
import type { SentTrade } from '../simulator/venueServer.ts';

export const tradeKey = (venue: string, market: string, tradeId: string) => `${venue}\u0000${market}\u0000${tradeId}`;

export interface TradeAccount {
  /** Printed on a market the service collects, within the run, from the first trade a socket carried to it. */
  printed: number;
  /** Of those, stored (each once or more). */
  stored: number;
  /** Stored more than once: extra rows. */
  duplicates: number;
  /** Printed, not stored, inside a recorded gap that was not recovered: per reason. */
  unrecoverable: Record<string, number>;
  /** Printed, not stored, in no recorded gap: lost without a trace. */
  unaccounted: string[];
  /** Where there are: when the first such market's lost trades were printed, and every gap recorded of it (seconds into the run). */
  unaccountedDetail?: string;
  /** Stored trades of the run's window that were never printed. */
  unexpected: string[];
}

interface GapRow {
  venue: string;
  market: string;
  from: number;
  to: number;
  state: string;
  reason: string;
}

/** The reason of the unrecovered gap that holds a trade, if any. */
function gapReasonOf(trade: SentTrade, gaps: ReadonlyMap<string, GapRow[]>): string | undefined {
  for (const g of gaps.get(`${trade.venue}\u0000${trade.market}`) ?? []) {
    if (trade.trade.time >= g.from && trade.trade.time <= g.to) return g.reason || g.state;
  }
  return undefined;
}

/**
 * Accounts for every printed trade of the markets the service collects (those it stored any trade
 * of), from the first trade of each market a socket delivered (`firstDelivered`, by market key):
 * before its subscription took effect the service had not started to follow the market.
 */
export async function accountTrades(store: Store, printed: readonly SentTrade[], window: { from: number; to: number }, firstDelivered: ReadonlyMap<string, number>): Promise<TradeAccount> {
  const rows = await store.rows<{ venue: string; market: string; id: string; n: number; ts: number }>(
    'SELECT venue, market, trade_id AS id, count() AS n, toUnixTimestamp64Milli(min(ts)) AS ts FROM trades GROUP BY venue, market, trade_id',
  );
  const stored = new Map<string, number>();
  const collected = new Set<string>();
  for (const r of rows) {
    stored.set(tradeKey(r.venue, r.market, r.id), Number(r.n));
    collected.add(`${r.venue}\u0000${r.market}`);
  }
  const gapRows = await store.rows<GapRow>(
    `SELECT venue, market, toUnixTimestamp64Milli(min(from_ts)) AS from, toUnixTimestamp64Milli(max(to_ts)) AS to,
            toString(argMax(state, version)) AS state, toString(argMax(reason, version)) AS reason
     FROM trade_gaps GROUP BY venue, market, gap_id HAVING state != 'recovered'`,
  );
  const gaps = Map.groupBy(gapRows.map((g) => ({ ...g, from: Number(g.from), to: Number(g.to) })), (g) => `${g.venue}\u0000${g.market}`);
  const account: TradeAccount = { printed: 0, stored: 0, duplicates: 0, unrecoverable: {}, unaccounted: [], unexpected: [] };
  const printedKeys = new Set<string>();
  const lost: SentTrade[] = [];
  for (const p of printed) {
    const market = `${p.venue}\u0000${p.market}`;
    if (!collected.has(market) || p.trade.time < (firstDelivered.get(market) ?? Infinity)) continue;
    const key = tradeKey(p.venue, p.market, p.tradeId);
    printedKeys.add(key);
    account.printed += 1;
    const n = stored.get(key) ?? 0;
    if (n > 0) {
      account.stored += 1;
      account.duplicates += n - 1;
      continue;
    }
    const reason = gapReasonOf(p, gaps);
    if (reason) account.unrecoverable[reason] = (account.unrecoverable[reason] ?? 0) + 1;
    else {
      account.unaccounted.push(key.replaceAll('\u0000', '/'));
      lost.push(p);
    }
  }
  if (lost.length > 0) account.unaccountedDetail = await describeLoss(store, lost, window.from);
  for (const r of rows) {
    const key = tradeKey(r.venue, r.market, r.id);
    const from = Math.max(window.from, firstDelivered.get(`${r.venue}\u0000${r.market}`) ?? Infinity);
    if (Number(r.ts) >= from && Number(r.ts) <= window.to && !printedKeys.has(key)) account.unexpected.push(key.replaceAll('\u0000', '/'));
  }
  return account;
}

/** For a failure to be understood from CI's log alone: the first lost market's span, and its gaps in every state. */
async function describeLoss(store: Store, lost: readonly SentTrade[], start: number): Promise<string> {
  const { venue, market } = lost[0]!;
  const times = lost.filter((t) => t.venue === venue && t.market === market).map((t) => t.trade.time);
  const at = (ms: number) => ((ms - start) / 1000).toFixed(1);
  const gaps = await store.rows<{ cause: string; state: string; from: number; to: number; seen: number }>(
    `SELECT toString(any(cause)) AS cause, toString(argMax(state, version)) AS state, toUnixTimestamp64Milli(min(from_ts)) AS from,
            toUnixTimestamp64Milli(max(to_ts)) AS to, toUnixTimestamp64Milli(min(received_at)) AS seen
     FROM trade_gaps WHERE venue = {venue:String} AND market = {market:String} GROUP BY gap_id ORDER BY from`,
    { venue, market },
  );
  const listed = gaps.map((g) => `${g.cause} ${g.state} ${at(Number(g.from))}-${at(Number(g.to))} s (found at ${at(Number(g.seen))} s)`).join('; ');
  return `${venue}/${market}: ${times.length} lost, printed ${at(Math.min(...times))}-${at(Math.max(...times))} s into the run; its gaps: ${listed || 'none'}`;
}

/** Seconds with a trade on a market that the index then counted, but no index row: seconds the index lost. */
export async function lostIndexSeconds(store: Store, from: number, to: number): Promise<{ checked: number; lost: string[] }> {
  const traded = await store.rows<{ asset: string; venue: string; market: string; s: number }>(
    `SELECT asset, venue, market, toUnixTimestamp(second) AS s FROM market_seconds
     WHERE second >= toDateTime({from:UInt32}, 'UTC') AND second <= toDateTime({to:UInt32}, 'UTC')
     GROUP BY asset, venue, market, s`,
    { from, to },
  );
  const ticks = await store.rows<{ asset: string; s: number; constituents: string[] }>(
    `SELECT asset, toUnixTimestamp(second) AS s, constituents FROM index_ticks FINAL
     WHERE second >= toDateTime({from:UInt32}, 'UTC') - INTERVAL 1 HOUR AND second <= toDateTime({to:UInt32}, 'UTC')
     ORDER BY asset, s`,
    { from, to },
  );
  const ticksOf = Map.groupBy(ticks, (t) => t.asset);
  const tradedAt = Map.groupBy(
    traded.filter((t) => findVenue(t.venue)?.contract !== 'perpetual'),
    (t) => `${t.asset}\u0000${t.s}`,
  );
  const lost: string[] = [];
  for (const [key, markets] of tradedAt) {
    const [asset, second] = [markets[0]!.asset, markets[0]!.s];
    const rows = ticksOf.get(asset) ?? [];
    // The asset's row of that second, else the latest before it (rows are sorted by second).
    let latest: (typeof rows)[number] | undefined;
    for (const r of rows) {
      if (r.s > second) break;
      latest = r;
    }
    if (latest?.s === second) continue;
    // Still a constituent and traded: that second should have had a row (its trade count is not 0).
    const constituents = new Set(latest?.constituents ?? []);
    if (markets.some((m) => constituents.has(`${m.venue}:${m.market}`))) lost.push(key.replace('\u0000', '@'));
  }
  return { checked: tradedAt.size, lost };
}
