// ClickHouse's HTTP interface over the embedded store, for one read-only user: what curl,
// @clickhouse/client, the JDBC/ODBC drivers over HTTP and Grafana's data source send (GET/POST /,
// `query=` and bodies, `param_*`, settings as URL parameters, X-ClickHouse-User/Key, basic auth),
// answered with ClickHouse's own error text and statuses. infra/sql/SQL.md is the operator's page.
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { httpServerOptions, limitConnections, type HttpLimitsConfig } from '../connectionLimits.ts';
import type { Logger } from '../log.ts';
import { ClickHouseError, httpStatusOf } from './clickhouseError.ts';
import { credentialsOf, queryOf, readBody } from './httpRequest.ts';
import { QueryGuard } from './queryGuard.ts';
import { credentialCheck } from './readerPassword.ts';
import { runReaderQuery, type ReaderStore } from './readerSession.ts';
import type { ReaderLimits } from './readerSettings.ts';

export interface SqlServerOptions {
  /** The embedded store's data directory. */
  path: string;
  database: string;
  host: string;
  port: number;
  user: string;
  password: string;
  limits: ReaderLimits;
  /** Queries the reader may have running at once; one more is refused with TOO_MANY_SIMULTANEOUS_QUERIES. */
  maxConcurrentQueries: number;
  /** The timeouts and caps of every port of the service (infra/connectionLimits.ts): SQL_HOST may expose this one too. */
  connections: HttpLimitsConfig;
  log: Logger;
}

export interface SqlServer {
  url: string;
  close(): Promise<void>;
}

/** Content types by format family, as ClickHouse sends them. */
function contentTypeOf(format: string): string {
  if (/^(JSON|NDJSON)/i.test(format)) return 'application/json; charset=UTF-8';
  if (/^CSV/i.test(format)) return 'text/csv; charset=UTF-8';
  if (/^(TSV|TabSeparated)/i.test(format)) return 'text/tab-separated-values; charset=UTF-8';
  if (/^(Parquet|Arrow|ArrowStream|ORC|Native|RowBinary|Avro)/i.test(format)) return 'application/octet-stream';
  return 'text/plain; charset=UTF-8';
}

function sendError(res: ServerResponse, err: ClickHouseError): void {
  res
    .writeHead(httpStatusOf(err.code), { 'content-type': 'text/plain; charset=UTF-8', 'x-clickhouse-exception-code': String(err.code) })
    .end(`${err.text}\n`);
}

export async function startSqlServer(options: SqlServerOptions): Promise<SqlServer> {
  const { log, user, database } = options;
  const isReader = credentialCheck(user, options.password);
  const store: ReaderStore = { path: options.path, database, limits: options.limits, guard: new QueryGuard({ database, user }), user };
  let running = 0;

  const answer = async (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://sql');
    if (url.pathname === '/ping' || (url.pathname === '/' && req.method === 'GET' && !url.searchParams.has('query'))) return void res.end('Ok.\n');
    if (url.pathname !== '/' || (req.method !== 'GET' && req.method !== 'POST')) return void res.writeHead(404).end(`There is no handle ${url.pathname}\n`);
    const given = credentialsOf(req, url);
    if (!isReader(given.user, given.password)) {
      throw ClickHouseError.of('AUTHENTICATION_FAILED', `${given.user}: Authentication failed: password is incorrect, or there is no user with such name`);
    }
    const request = queryOf(url, await readBody(req));
    if (request.query.trim() === '') throw ClickHouseError.of('SYNTAX_ERROR', 'Empty query');
    // A client's own database name (`default`, what clickhouse-js sends unless told) means the service's.
    if (request.database !== undefined && request.database !== 'default' && request.database !== database) {
      throw ClickHouseError.of('UNKNOWN_DATABASE', `Database ${request.database} does not exist (the reader's database is ${database})`);
    }
    if (running >= options.maxConcurrentQueries) {
      throw ClickHouseError.of('TOO_MANY_SIMULTANEOUS_QUERIES', `Too many simultaneous queries for user ${user}. Current: ${running}, maximum: ${options.maxConcurrentQueries}`);
    }
    running += 1;
    const started = performance.now();
    try {
      const result = await runReaderQuery(store, request);
      log.debug({ user, ms: Math.round(performance.now() - started), bytes: result.body.length, format: result.format }, 'sql query');
      res
        .writeHead(200, {
          'content-type': contentTypeOf(result.format),
          'x-clickhouse-format': result.format,
          'x-clickhouse-query-id': url.searchParams.get('query_id') ?? randomUUID(),
          'content-length': result.body.length,
        })
        .end(result.body);
    } finally {
      running -= 1;
    }
  };

  const server: Server = createServer(httpServerOptions(options.connections), (req, res) => {
    answer(req, res).catch((err: unknown) => {
      const error = err instanceof ClickHouseError ? err : ClickHouseError.fromEngine(err, user);
      log.debug({ code: error.code }, 'sql query refused or failed');
      if (!res.headersSent) sendError(res, error);
      else res.destroy();
    });
  });
  limitConnections(server, options.connections, log);
  await new Promise<void>((done, fail) => {
    server.once('error', fail);
    server.listen(options.port, options.host, done);
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${options.host.includes(':') ? `[${options.host}]` : options.host}:${port}`,
    close: () =>
      new Promise<void>((done) => {
        server.close(() => done());
        server.closeAllConnections();
      }),
  };
}
