// Joins a discovered asset into the asset the operator mapped its venue ticker to
// (infra/catalog/identities.ts): its trades and liquidations are stored again under the target
// (prices over the scale, quantities times it), so the views roll the target's candles, first
// prints and extremes from them, and the index runner is asked to compute the target's index again
// from the first of them; its connection states and gaps are copied; then every row of the
// discovered id is deleted, and the id is recorded as an alias. Each step can be run again: a
// trade the target already holds (same venue, market, trade id) is not stored twice, so a run cut
// short, or trades a collector still sent under the old id, are finished by the next run.
import { discoveredAssetId } from '../../infra/catalog/discovered.ts';
import type { IdentityMapping } from '../../infra/catalog/identities.ts';
import { identities } from '../../infra/catalog/identities.ts';
import type { Job } from '../../infra/jobs.ts';
import type { Logger } from '../../infra/log.ts';
import type { Store } from '../../infra/store.ts';
import { requestIndexRecompute } from '../indexRecomputeRequests.ts';

/** Tables whose rows are measured events: stored again under the target, in its units. */
const movedEvents = [
  {
    table: 'trades',
    id: 'trade_id',
    columns: 'venue, market, asset, quote, trade_id, ts, received_at, price, quantity, side',
    select: 'venue, market, {to:String}, quote, trade_id, ts, received_at, price / {scale:Float64}, quantity * {scale:Float64}, side',
  },
  {
    table: 'liquidations',
    id: 'liquidation_id',
    columns: 'asset, venue, market, quote, liquidation_id, ts, received_at, price, quantity, position_side, sampled',
    select: '{to:String}, venue, market, quote, liquidation_id, ts, received_at, price / {scale:Float64}, quantity * {scale:Float64}, position_side, sampled',
  },
] as const;

/**
 * Tables of states our collectors reported per market: copied as they are (nothing in them is in
 * asset units), except what the target already holds under the same key.
 */
const copiedStates = [
  { table: 'market_connections', key: 'venue, market, ts' },
  { table: 'trade_gaps', key: 'venue, market, event_id' },
] as const;

/** The columns an INSERT takes (not MATERIALIZED or ALIAS ones), in table order. */
async function insertableColumns(store: Store, table: string): Promise<string[]> {
  const rows = await store.rows<{ name: string }>(
    "SELECT name FROM system.columns WHERE database = currentDatabase() AND table = {table:String} AND default_kind NOT IN ('MATERIALIZED', 'ALIAS') ORDER BY position",
    { table },
  );
  return rows.map((r) => r.name);
}

export interface JoinOutcome {
  alias: string;
  target: string;
  /** Rows stored under the target by this run. */
  trades: number;
  liquidations: number;
}

/** Every table of the store with an `asset` column: the rows of the alias are deleted from each (views' targets included). */
async function assetTables(store: Store): Promise<string[]> {
  const rows = await store.rows<{ table: string }>(
    `SELECT c.table AS table FROM system.columns AS c
     INNER JOIN system.tables AS t ON t.database = c.database AND t.name = c.table
     WHERE c.database = currentDatabase() AND c.name = 'asset' AND t.engine LIKE '%MergeTree'
     ORDER BY c.table`,
  );
  return rows.map((r) => r.table);
}

async function count(store: Store, table: string, asset: string): Promise<number> {
  const [row] = await store.rows<{ n: number }>('SELECT count() AS n FROM {table:Identifier} WHERE asset = {asset:String}', { table, asset });
  return Number(row?.n ?? 0);
}

/** Why an alias was joined (asset_aliases.reason): the operator's mapping, or a delisting that retired it. */
export type AliasReason = 'identities-file' | 'delisted';

/** Joins one mapping's discovered asset into its target; nothing to do when the store holds nothing of it. */
export async function joinIdentity(
  store: Store,
  mapping: Pick<IdentityMapping, 'venue' | 'ticker' | 'asset' | 'scale'>,
  tables?: readonly string[],
  reason: AliasReason = 'identities-file',
): Promise<JoinOutcome | undefined> {
  const alias = discoveredAssetId(mapping.venue, mapping.ticker);
  if (!alias || alias === mapping.asset) return undefined;
  tables ??= await assetTables(store);
  const held = await Promise.all(tables.map((table) => count(store, table, alias)));
  if (held.every((n) => n === 0)) return undefined;
  const params = { from: alias, to: mapping.asset, scale: mapping.scale, venue: mapping.venue };
  // chDB keeps the last insert's deduplication token on its shared session (infra/store.ts): under a
  // sink's token these blocks could be dropped as its repeats. A token of their own, never reused:
  // what keeps a block from being stored twice here is the NOT IN of each copy.
  const settings = (table: string) => ({ insert_deduplication_token: `identity-join/${alias}/${table}/${Date.now()}/${Math.random()}` });
  const [first] = await store.rows<{ ms: number | string; n: number | string }>(
    'SELECT toUnixTimestamp64Milli(min(ts)) AS ms, count() AS n FROM trades WHERE asset = {from:String}',
    params,
  );
  const moved: Record<string, number> = {};
  for (const e of movedEvents) {
    const before = await count(store, e.table, mapping.asset);
    await store.client.command({
      query: `INSERT INTO ${e.table} (${e.columns})
              SELECT ${e.select} FROM ${e.table}
              WHERE asset = {from:String}
                AND (venue, market, ${e.id}) NOT IN (SELECT venue, market, ${e.id} FROM ${e.table} WHERE asset = {to:String} AND venue = {venue:String})`,
      query_params: params,
      clickhouse_settings: settings(e.table),
    });
    moved[e.table] = (await count(store, e.table, mapping.asset)) - before;
  }
  // Moved with one INSERT ... SELECT, not through the trade sink that tells the index runner of late
  // trades: the target's index is computed again from the first of them.
  if (Number(first?.n ?? 0) > 0) await requestIndexRecompute(store, mapping.asset, Number(first!.ms), 'identity-join');
  for (const { table, key } of copiedStates) {
    const columns = await insertableColumns(store, table);
    // The target's id in place of `asset`, with no alias: an alias named asset would be what WHERE reads.
    const select = columns.map((c) => (c === 'asset' ? '{to:String}' : c)).join(', ');
    await store.client.command({
      query: `INSERT INTO ${table} (${columns.join(', ')})
              SELECT ${select} FROM ${table}
              WHERE asset = {from:String} AND (${key}) NOT IN (SELECT ${key} FROM ${table} WHERE asset = {to:String} AND venue = {venue:String})`,
      query_params: params,
      clickhouse_settings: settings(table),
    });
  }
  // Only now that the target holds everything: the alias's rows go, derived ones included.
  for (const table of tables) await store.client.command({ query: 'DELETE FROM {table:Identifier} WHERE asset = {from:String}', query_params: { table, from: alias } });
  const [previous] = await store.rows<{ trades: number; liquidations: number }>(
    'SELECT trades_moved AS trades, liquidations_moved AS liquidations FROM asset_aliases FINAL WHERE alias = {alias:String}',
    { alias },
  );
  const outcome = { alias, target: mapping.asset, trades: moved.trades ?? 0, liquidations: moved.liquidations ?? 0 };
  await store.insert('asset_aliases', [
    {
      alias,
      target: mapping.asset,
      venue: mapping.venue,
      ticker: mapping.ticker,
      scale: mapping.scale,
      trades_moved: Number(previous?.trades ?? 0) + outcome.trades,
      liquidations_moved: Number(previous?.liquidations ?? 0) + outcome.liquidations,
      joined_at: Date.now(),
      reason,
    },
  ]);
  return outcome;
}

/** Joins every mapping of the identities file; logs what moved. */
export async function joinIdentities(store: Store, mappings: readonly IdentityMapping[], log: Logger, signal?: AbortSignal): Promise<JoinOutcome[]> {
  const outcomes: JoinOutcome[] = [];
  // The store's tables are the same for every mapping of a run: read once.
  const tables = mappings.length > 0 ? await assetTables(store) : [];
  for (const mapping of mappings) {
    if (signal?.aborted) break;
    const outcome = await joinIdentity(store, mapping, tables);
    if (!outcome) continue;
    outcomes.push(outcome);
    log.info(outcome, 'discovered asset joined into the asset the identities file maps it to: its history moved');
  }
  return outcomes;
}

/** Every 5 minutes (and at start): a collector of another process may still send trades under the old id for a while. */
export const identityJoinsJob: Job = {
  name: 'identity-joins',
  everyMs: 5 * 60_000,
  async run({ store, log, signal }) {
    await joinIdentities(store, identities.mappings, log, signal);
  },
};
