import { resolve } from 'node:path';
import { ConfigError } from '../config.ts';
import { loadReaderPassword, type ReaderPassword } from '../sql/readerPassword.ts';
import { startSqlServer } from '../sql/sqlServer.ts';
import type { RoleContext } from './context.ts';

/** Where the SQL endpoint answers, and the reader's password to show (the demo prints both). */
export interface SqlAccess {
  url: string;
  user: string;
  password: ReaderPassword;
}

/**
 * The read-only SQL endpoint (infra/sql/SQL.md), in the process that holds the embedded store: off
 * unless SQL_PORT is set; with CLICKHOUSE_URL readers use the ClickHouse server itself.
 */
export async function startSql({ config, log, life }: RoleContext, options: { portOptional?: boolean } = {}): Promise<SqlAccess | undefined> {
  if (config.SQL_PORT === undefined) return undefined;
  if (config.CLICKHOUSE_URL !== undefined) {
    log.warn('SQL_PORT is ignored with CLICKHOUSE_URL: readers query the ClickHouse server (infra/sql/SQL.md has the reader to create there)');
    return undefined;
  }
  const password = loadReaderPassword(config);
  let server: Awaited<ReturnType<typeof startSqlServer>>;
  try {
    server = await startSqlServer({
      path: resolve(config.MDS_DATA_DIR),
      database: config.CLICKHOUSE_DATABASE,
      host: config.SQL_HOST,
      port: config.SQL_PORT,
      user: config.SQL_USER,
      password: password.password,
      limits: {
        max_execution_time: config.SQL_MAX_EXECUTION_TIME_S,
        max_result_rows: config.SQL_MAX_RESULT_ROWS,
        max_result_bytes: config.SQL_MAX_RESULT_BYTES,
        max_memory_usage: config.SQL_MAX_MEMORY_BYTES,
        max_threads: config.SQL_MAX_THREADS,
      },
      maxConcurrentQueries: config.SQL_MAX_CONCURRENT_QUERIES,
      connections: config,
      log: log.child({ part: 'sql' }),
    });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw err;
    const message = `SQL_PORT ${config.SQL_PORT} on ${config.SQL_HOST} is in use: set SQL_PORT to a free port (0: any)`;
    // The demo's own default (8123, ClickHouse's port) may be taken by a ClickHouse on the laptop: it goes on without.
    if (!options.portOptional) throw new ConfigError(message);
    log.warn(`${message}; the read-only SQL endpoint is not started`);
    return undefined;
  }
  life.add('sql', 'front', () => server.close());
  log.info({ url: server.url, user: config.SQL_USER, passwordFile: password.file }, 'read-only SQL endpoint (ClickHouse HTTP interface) listening');
  return { url: server.url, user: config.SQL_USER, password };
}
