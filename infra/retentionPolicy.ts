/**
 * How long the time-series tables keep their rows (STORE_RETENTION_DAYS): per table, the column a
 * row's age is taken from and the default. Applied as the table's TTL by infra/retention.ts; no
 * imports, so that infra/config.ts can validate the setting with it.
 */

interface RetentionRule {
  /** The row's time, as a DateTime (a TTL needs one): the column, converted when it is a DateTime64. */
  age: string;
  /** Days kept when the operator names no other; undefined = kept for ever. */
  defaultDays?: number;
  /** Fewest days the code that reads the table needs. */
  minDays: number;
  /** What reads the table's past, for the documentation. */
  note: string;
  /** The table whose rows this one copies in another order: it keeps what that one keeps, and is not named on its own. */
  follows?: string;
}

// Each interval is fed as trades arrive (the cascade of views), not rebuilt from what a shorter one keeps.
const candles = (interval: string): RetentionRule => ({ age: 'bucket', minDays: 1, note: `candles and charts at ${interval}` });

export const retentionTables = {
  trades: { age: 'toDateTime(ts)', minDays: 1, note: 'the sinks recognise a replayed trade only while it is kept here: a replay of an older one counts again in the candles' },
  candles_1m: candles('1m'),
  candles_5m: candles('5m'),
  candles_15m: candles('15m'),
  candles_1h: candles('1h'),
  candles_4h: candles('4h'),
  candles_1d: candles('1d'),
  candles_1w: candles('1w'),
  market_seconds: { age: 'second', minDays: 2, note: 'the index engine reads 24 h of it back from each second it computes' },
  index_ticks: { age: 'second', minDays: 2, note: 'the current price reads up to 48 h of it; index charts and FX read further back' },
  index_ticks_by_time: { age: 'second', minDays: 2, follows: 'index_ticks', note: 'a copy of index_ticks sorted by time: the current price and the price at a past time read thin slices of it' },
  index_summary_10m: { age: 'bucket', minDays: 3, note: 'the current price reads its last 48 h' },
  liquidations: { age: 'toDateTime(ts)', minDays: 1, note: '/v1/liquidations lists them; as for trades, a replay older than what is kept counts again in liquidations_1m' },
  liquidations_1m: { age: 'bucket', minDays: 1, note: '/v1/liquidations sums its windows from it' },
  chain_swaps: { age: 'ts', minDays: 1, note: 'DEX volumes of /v1/chains' },
  market_connections: { age: 'toDateTime(ts)', minDays: 2, note: 'the index engine excludes a market while its latest status says disconnected; a status older than what is kept no longer counts; a delisted discovered asset is retired a day after its delisting status' },
  trade_gaps: { age: 'toDateTime(ts)', minDays: 1, note: 'coverage of trade windows (unrecovered gaps)' },
  sink_intents: { age: 'toDateTime(written_at)', defaultDays: 1, minDays: 1, note: 'read only for bus offsets not yet committed' },
  index_recompute_requests: { age: 'toDateTime(requested_at)', defaultDays: 30, minDays: 1, note: 'the index runner takes each request within seconds of it' },
} as const satisfies Record<string, RetentionRule>;

export type RetentionTable = keyof typeof retentionTables;
/** Days per table the operator named (STORE_RETENTION_DAYS). */
export type RetentionDays = Partial<Record<RetentionTable, number>>;

const isRetentionTable = (name: string): name is RetentionTable => Object.hasOwn(retentionTables, name);

/**
 * `table=days,table=days` (spaces allowed; empty = none named). Throws an Error that names the
 * entry at fault: an unknown table, a count that is not a whole number of days, one below the
 * table's minimum, a table named twice.
 */
export function parseRetentionDays(text: string): RetentionDays {
  const out: RetentionDays = {};
  for (const entry of text.split(',').map((s) => s.trim()).filter(Boolean)) {
    const match = /^([a-z0-9_]+)\s*=\s*(\d+)$/.exec(entry);
    if (!match) throw new Error(`"${entry}" is not table=days (e.g. trades=365)`);
    const [, table, digits] = match as unknown as [string, string, string];
    if (!isRetentionTable(table)) throw new Error(`unknown table "${table}"; tables with a retention: ${Object.keys(retentionTables).join(', ')}`);
    const days = Number(digits);
    const rule: RetentionRule = retentionTables[table];
    if (rule.follows !== undefined) throw new Error(`${table} keeps what ${rule.follows} keeps: name ${rule.follows}`);
    const { minDays } = rule;
    if (!Number.isSafeInteger(days) || days < minDays) throw new Error(`${table}=${digits}: at least ${minDays} day${minDays === 1 ? '' : 's'} (a whole number)`);
    if (out[table] !== undefined) throw new Error(`${table} is named twice`);
    out[table] = days;
  }
  return out;
}

/** Days each table keeps: what the operator named, else its default (undefined = for ever); a copy keeps what the table it follows keeps. */
export function retentionOf(named: RetentionDays): Record<RetentionTable, number | undefined> {
  const tables = Object.keys(retentionTables) as RetentionTable[];
  const own = (t: RetentionTable) => named[t] ?? (retentionTables[t] as RetentionRule).defaultDays;
  const kept = (t: RetentionTable) => {
    const follows = (retentionTables[t] as RetentionRule).follows;
    return follows !== undefined && isRetentionTable(follows) ? own(follows) : own(t);
  };
  return Object.fromEntries(tables.map((t) => [t, kept(t)])) as Record<RetentionTable, number | undefined>;
}
