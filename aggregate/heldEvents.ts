import type { EventOfTopic, Topic } from '../infra/events.ts';
import type { StoreCalls } from '../infra/store.ts';

/**
 * How one topic lands in its raw table. An event's identity is venue + market + the venue's own
 * id (a venue never reuses an id within a market); the table has columns `venue`, `market`, `ts`,
 * `idColumn` and `scopeColumn`, the leading column of its sort key, which narrows the lookup.
 */
export interface DedupedTable<T extends Topic> {
  topic: T;
  table: string;
  /** Consumer group when the options name none. */
  group: string;
  idColumn: string;
  idOf(event: EventOfTopic[T]): string;
  scopeColumn: 'asset' | 'venue';
  row(event: EventOfTopic[T]): object;
}

export const eventKey = (venue: string, market: string, id: string) => `${venue}\u0000${market}\u0000${id}`;
export const marketKey = (venue: string, market: string) => `${venue}\u0000${market}`;

/**
 * What the sink knows of one venue + market in its table: no row is later than `ts`, and `ids`
 * are the ids held at exactly `ts` when the sink stored them itself (unknown when `ts` came from
 * the table). An event later than `ts` cannot be held, so only the others need the lookup: in
 * order, nearly none. Sound while this sink is the table's only writer of the market, as the bus
 * makes it (one partition per asset, one member per partition); forgotten on every assignment.
 */
export interface LatestHeld {
  ts: number;
  ids?: Set<string>;
}

/** The time span and lookup scopes of some events. */
function spanOf<T extends Topic>(target: DedupedTable<T>, events: readonly EventOfTopic[T][]): { from: number; to: number; scopes: string[] } {
  let from = Infinity;
  let to = -Infinity;
  const scopes = new Set<string>();
  for (const e of events) {
    from = Math.min(from, e.ts);
    to = Math.max(to, e.ts);
    scopes.add(e[target.scopeColumn]);
  }
  return { from, to, scopes: [...scopes] };
}

/** Per venue + market of the given events: the latest time the table holds at or after the earliest of them. */
export async function latestHeldFrom<T extends Topic>(store: StoreCalls, target: DedupedTable<T>, events: readonly EventOfTopic[T][]): Promise<{ from: number; latest: Map<string, number> }> {
  const { from, scopes } = spanOf(target, events);
  // Not `AS ts`: in ClickHouse an alias hides the column of the same name in WHERE.
  const rows = await store.rows<{ venue: string; market: string; latest: number }>(
    `SELECT venue, market, toUnixTimestamp64Milli(max(ts)) AS latest FROM {table:Identifier}
     WHERE {scopeColumn:Identifier} IN {scopes:Array(String)} AND ts >= fromUnixTimestamp64Milli({from:Int64}, 'UTC')
     GROUP BY venue, market`,
    { table: target.table, scopeColumn: target.scopeColumn, scopes, from },
  );
  return { from, latest: new Map(rows.map((r) => [marketKey(r.venue, r.market), r.latest])) };
}

/**
 * How far from an event's time its stored copy may be: a venue's REST history can give a trade's
 * time coarser than its stream did (Bitstamp: to the second, rounded down), and a recovered copy
 * must still be found.
 */
export const lookupToleranceMs = 1_000;

/** Keys (`eventKey`) of the given events that the table already holds (at their time, give or take `lookupToleranceMs`). */
export async function heldKeys<T extends Topic>(store: StoreCalls, target: DedupedTable<T>, events: readonly EventOfTopic[T][]): Promise<Set<string>> {
  if (events.length === 0) return new Set();
  const span = spanOf(target, events);
  const { scopes } = span;
  const from = span.from - lookupToleranceMs;
  const to = span.to + lookupToleranceMs;
  const rows = await store.rows<{ venue: string; market: string; id: string }>(
    `SELECT venue, market, {idColumn:Identifier} AS id FROM {table:Identifier}
     WHERE {scopeColumn:Identifier} IN {scopes:Array(String)}
       AND ts BETWEEN fromUnixTimestamp64Milli({from:Int64}, 'UTC') AND fromUnixTimestamp64Milli({to:Int64}, 'UTC')`,
    { idColumn: target.idColumn, table: target.table, scopeColumn: target.scopeColumn, scopes, from, to },
  );
  return new Set(rows.map((r) => eventKey(r.venue, r.market, r.id)));
}
