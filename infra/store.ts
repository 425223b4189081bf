import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { createClient, type ClickHouseClient } from '@clickhouse/client';
import { createChdbConnection } from 'chdb/connection';
import { configSchema, type Config } from './config.ts';

type ClientOptions = NonNullable<Parameters<typeof createClient>[0]>;

/**
 * The ClickHouse store: one `@clickhouse/client` for both scales. Embedded chDB (data in
 * MDS_DATA_DIR) when CLICKHOUSE_URL is unset, a ClickHouse server otherwise. Same SQL.
 */
export interface Store extends StoreCalls {
  readonly client: ClickHouseClient;
  readonly description: string;
  close(): Promise<void>;
}

/**
 * What code that reads and writes rows needs of the store. The API takes only this: in a process
 * that also aggregates, its thread reaches the store through the main thread (infra/roles/apiThread.ts).
 */
export interface StoreCalls {
  /**
   * Inserts rows as one block. Always sends the same settings: chDB keeps settings on its
   * shared session, so a dedup token sent with one insert would otherwise apply to the next.
   * Rejects with StoreTimeoutError past the insert deadline; the rows may still land, and so may
   * the table's part while a view fed from it failed: the same rows under the same token complete it.
   */
  insert(table: string, rows: readonly object[], dedupToken?: string): Promise<void>;
  /** Runs a parameterised SELECT and returns its rows; StoreTimeoutError past the query deadline. Values only ever go through `params`. */
  rows<T>(query: string, params?: Record<string, unknown>): Promise<T[]>;
}

/** Every key that some row of a block has, in the order first seen. */
function columnsOf(rows: readonly object[]): [string, ...string[]] {
  const columns = new Set<string>();
  for (const row of rows) for (const key in row) columns.add(key);
  return [...columns] as [string, ...string[]];
}

/** chDB allows one process per data directory. */
export class StoreInUseError extends Error {
  override name = 'StoreInUseError';
  constructor(path: string, options?: ErrorOptions) {
    super(`the embedded store in ${path} is in use by another process`, options);
  }
}

export type StoreConfig = Pick<Config, 'CLICKHOUSE_URL' | 'CLICKHOUSE_DATABASE' | 'MDS_DATA_DIR'>;

/** Deadlines (ms) of one store call: STORE_QUERY_TIMEOUT_MS and STORE_INSERT_TIMEOUT_MS. */
export interface StoreTimeouts {
  queryTimeoutMs: number;
  insertTimeoutMs: number;
}

const configDefaults = configSchema.pick({ STORE_QUERY_TIMEOUT_MS: true, STORE_INSERT_TIMEOUT_MS: true }).parse({});
export const defaultStoreTimeouts: StoreTimeouts = {
  queryTimeoutMs: configDefaults.STORE_QUERY_TIMEOUT_MS,
  insertTimeoutMs: configDefaults.STORE_INSERT_TIMEOUT_MS,
};

export type StoreOperation = 'query' | 'insert';

/** A store call that did not settle within its deadline; the engine may still be running it. */
export class StoreTimeoutError extends Error {
  override name = 'StoreTimeoutError';
  readonly operation: StoreOperation;
  readonly timeoutMs: number;
  constructor(operation: StoreOperation, timeoutMs: number) {
    super(`the store ${operation} did not answer within ${timeoutMs} ms`);
    this.operation = operation;
    this.timeoutMs = timeoutMs;
  }
}

/**
 * Runs one store call with a deadline. At the deadline the call is aborted through `signal`
 * and, whatever the call does with that, the caller gets a StoreTimeoutError: chDB settles an
 * aborted call early but cannot interrupt the native query, and a call that never settles must
 * not hold its caller (and everything queued behind it) forever.
 */
export async function withDeadline<T>(operation: StoreOperation, timeoutMs: number, call: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => {
      const timeout = new StoreTimeoutError(operation, timeoutMs);
      controller.abort(timeout);
      reject(timeout);
    }, timeoutMs);
  });
  try {
    return await Promise.race([call(controller.signal), deadline]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Opens the store. `rows` and `insert` have deadlines (`timeouts`, default: the configuration's
 * defaults); `client` is the raw client, without one, for migrations and maintenance commands.
 */
export async function openStore(config: StoreConfig, timeouts: Partial<StoreTimeouts> = {}): Promise<Store> {
  const { queryTimeoutMs, insertTimeoutMs } = { ...defaultStoreTimeouts, ...timeouts };
  const database = config.CLICKHOUSE_DATABASE;
  let client: ClickHouseClient;
  let description: string;
  if (config.CLICKHOUSE_URL) {
    const url = new URL(config.CLICKHOUSE_URL);
    const admin = createClient({ url: config.CLICKHOUSE_URL });
    await admin.command({ query: `CREATE DATABASE IF NOT EXISTS ${database}` });
    await admin.close();
    client = createClient({ url: config.CLICKHOUSE_URL, database });
    description = `clickhouse(${url.host}/${database})`;
  } else {
    const path = resolve(config.MDS_DATA_DIR);
    // Owner-only when we create it: it holds the key table and the generated secrets.
    mkdirSync(path, { recursive: true, mode: 0o700 });
    let bootstrap: ClickHouseClient;
    try {
      // chdb depends on its own copy of @clickhouse/client-common: same contract, distinct type identity.
      const connection = createChdbConnection({ path }) as unknown as NonNullable<ClientOptions['connection']>;
      bootstrap = createClient({ connection });
      await bootstrap.command({ query: `CREATE DATABASE IF NOT EXISTS ${database}` });
    } catch (err) {
      if ((err as { code?: string }).code === 'CHDB_CONNECTION') throw new StoreInUseError(path, { cause: err });
      throw err;
    }
    // chDB has no per-connection database option: select it on the shared session.
    await bootstrap.command({ query: `USE ${database}` });
    client = bootstrap;
    description = `chdb(${path}/${database})`;
  }

  return {
    client,
    description,
    async insert(table, rows, dedupToken = '') {
      if (rows.length === 0) return;
      // Each row as an array under the block's column names (JSONCompactEachRow): the values of
      // JSONEachRow without every key repeated in every row, which clickhouse-js writes and the
      // engine parses faster (trades with their views: 60-71k rows/s against 49-57k on this 2-core
      // machine). A column that a row lacks goes as null (JSON has no undefined), which
      // input_format_null_as_default turns into the column's default, as a missing key would be.
      const columns = columnsOf(rows);
      await withDeadline('insert', insertTimeoutMs, async (signal) => {
        await client.insert({
          table,
          columns,
          values: rows.map((row) => columns.map((c) => (row as Record<string, unknown>)[c])),
          format: 'JSONCompactEachRow',
          clickhouse_settings: {
            async_insert: 0,
            insert_deduplication_token: dedupToken,
            // A block the table already holds under this token still goes to each view, which keeps
            // it once: a view that failed on the first try (the table's part had landed) gets it on
            // the retry. ClickHouse's default only since 26.2 (system.settings_changes); older servers say 0.
            deduplicate_blocks_in_dependent_materialized_views: 1,
            input_format_null_as_default: 1,
          },
          abort_signal: signal,
        });
      });
    },
    rows<T>(query: string, params: Record<string, unknown> = {}) {
      return withDeadline('query', queryTimeoutMs, async (signal) => {
        const result = await client.query({
          query,
          query_params: params,
          format: 'JSONEachRow',
          // A ClickHouse server quotes 64-bit integers in JSON by default; chDB does not. Same shape on both.
          clickhouse_settings: { output_format_json_quote_64bit_integers: 0 },
          abort_signal: signal,
        });
        return result.json<T>();
      });
    },
    close: () => client.close(),
  };
}
