import { Session } from 'chdb';
import { ClickHouseError } from './clickhouseError.ts';
import type { AskEngine, QueryGuard } from './queryGuard.ts';
import { sessionSettings, type ReaderLimits } from './readerSettings.ts';

/** One reader query as the HTTP request gives it. */
export interface ReaderQuery {
  query: string;
  /** `param_*` values, unescaped. */
  params: Record<string, string>;
  /** Settings given as URL parameters. */
  settings: ReadonlyMap<string, string>;
  /** The format when the query has no FORMAT clause (default_format; ClickHouse's HTTP default is TabSeparated). */
  defaultFormat?: string;
}

export interface ReaderResult {
  /** The result, whole: chDB hands a query's result over in one piece. */
  body: Buffer;
  format: string;
}

export interface ReaderStore {
  /** The embedded store's data directory (MDS_DATA_DIR, resolved). */
  path: string;
  /** The service's database: unqualified names resolve there. */
  database: string;
  limits: ReaderLimits;
  guard: QueryGuard;
  user: string;
}

/**
 * A chDB session of its own for one step of one query: chDB keeps SET settings on a session, and a
 * session that was made read-only stays so (it cannot change a setting again), so the service's own
 * session (infra/store.ts, which the aggregator writes through) is never touched. Settings first,
 * then `readonly = 1`: from there the engine refuses writes, DDL, SYSTEM, any SETTINGS clause and
 * any change of a limit, with its own errors.
 */
async function withReadOnlySession<T>(store: ReaderStore, settings: readonly string[], use: (session: Session) => Promise<T>): Promise<T> {
  const session = new Session(store.path);
  try {
    await session.queryAsync(`USE ${store.database}`);
    for (const set of [...settings, 'SET readonly = 1']) await session.queryAsync(set);
    return await use(session);
  } finally {
    session.close();
  }
}

/** Runs `sql` on the session, bound to `params` when there are any (chDB binds them server-side, as ClickHouse does `param_*`). */
function run(session: Session, sql: string, params: Record<string, unknown>, format: string) {
  return Object.keys(params).length > 0 ? session.queryBindAsync(sql, params, { format }) : session.queryAsync(sql, { format });
}

/**
 * Runs one reader query: checked by the guard on a read-only session under the service's limits,
 * then run on another read-only session with the limits (lowered where the request asks) and the
 * output settings it gives. Errors are ClickHouse's, worded for the reader.
 */
export async function runReaderQuery(store: ReaderStore, request: ReaderQuery): Promise<ReaderResult> {
  const settings = sessionSettings(request.settings, store.limits);
  const defaultFormat = request.defaultFormat ?? 'TabSeparated';
  if (!/^\w+$/.test(defaultFormat)) throw ClickHouseError.of('UNKNOWN_FORMAT', `Unknown format ${defaultFormat}`);
  try {
    const checked = await withReadOnlySession(store, sessionSettings(new Map(), store.limits), (session) => {
      const ask: AskEngine = async <T>(sql: string, params: Record<string, unknown> = {}) => {
        const text = (await run(session, sql, params, 'JSONEachRow')).text();
        return text.split('\n').filter(Boolean).map((line) => JSON.parse(line) as T);
      };
      return store.guard.check(request.query, request.params, ask);
    });
    // Copied while the session is open: the result's bytes are the engine's memory, not to be read once it is closed.
    const body = await withReadOnlySession(store, settings, async (session) => Buffer.from((await run(session, checked.sql, request.params, defaultFormat)).bytes()));
    return { body, format: checked.format ?? defaultFormat };
  } catch (err) {
    throw err instanceof ClickHouseError ? err : ClickHouseError.fromEngine(err, store.user);
  }
}
