// A ClickHouse HTTP endpoint over one chDB data directory, for tests of the split deployment: every
// role of the service then reaches one store through CLICKHOUSE_URL, as it would reach a ClickHouse
// server (Debian packages none recent enough for our migrations). It speaks the part of the HTTP
// interface that @clickhouse/client uses: GET /ping, and POST / with the SQL in the body, or the
// SQL in `query=` and the data in the body (inserts); `param_*` values, settings and `database` as
// URL parameters; errors as ClickHouse's `Code: N. DB::Exception: ...` text with a 500.
//
//   node test/support/clickhouseFront.ts <data dir> [port]   prints `clickhouse front listening on http://127.0.0.1:<port>`
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { Readable } from 'node:stream';
import type { AddressInfo } from 'node:net';
import { pathToFileURL } from 'node:url';
import { createChdbConnection } from 'chdb/connection';
// The client's escaped parameter values, unescaped as the production SQL endpoint does.
import { tsvUnescape } from '../../infra/sql/httpRequest.ts';

/** URL parameters that are not settings of the query. */
const notSettings = new Set(['query', 'query_id', 'database', 'session_id', 'role', 'default_format']);

const readBody = async (req: IncomingMessage): Promise<string> => {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
};

/** A request parked by `hold`: received whole, run only once released. */
export interface HeldRequest {
  /** Its SQL: the `query=` parameter, or the body. */
  readonly query: string;
  /** Queues the request now, behind whatever the front ran meanwhile; resolves once it has run. */
  release(): Promise<void>;
}

export interface ClickHouseFront {
  url: string;
  /**
   * Parks the next request whose SQL (and data, for an insert) match (received whole, neither run nor answered) and
   * resolves with it; every other request is answered as usual. It stands for an insert sent by a
   * client that died with it in flight, which a server may still complete seconds later.
   */
  hold(match: (query: string, data: string) => boolean): Promise<HeldRequest>;
  close(): Promise<void>;
}

export async function startClickHouseFront(dataDir: string, port = 0): Promise<ClickHouseFront> {
  const path = resolve(dataDir);
  mkdirSync(path, { recursive: true });
  const connection = createChdbConnection({ path });
  // chDB has one session per process: the database in use and SET settings are shared, so requests run one at a time.
  let queue: Promise<unknown> = Promise.resolve();
  let database = 'default';
  let holding: { match: (query: string, data: string) => boolean; parked: (held: HeldRequest) => void } | undefined;

  /** Resolves when the request may run: at once, or when the test releases it. */
  function releaseOf(query: string, data: string): { mayRun: Promise<void>; ran: () => void } {
    const hold = holding;
    if (!hold?.match(query, data)) return { mayRun: Promise.resolve(), ran: () => {} };
    holding = undefined;
    let allow!: () => void;
    let ran!: () => void;
    const mayRun = new Promise<void>((r) => (allow = r));
    const done = new Promise<void>((r) => (ran = r));
    hold.parked({ query, release: () => (allow(), done) });
    return { mayRun, ran };
  }

  const answer = async (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://front');
    if (req.method === 'GET' && url.pathname === '/ping') return void res.end('Ok.\n');
    if (req.method !== 'POST' || url.pathname !== '/') return void res.writeHead(404).end('only POST / and GET /ping\n');
    if (req.headers['content-type']?.startsWith('multipart/')) return void res.writeHead(501).end('multipart parameters are not supported by this front\n');
    const body = await readBody(req);
    const inUrl = url.searchParams.get('query');
    const query = inUrl === null ? body : `${inUrl}\n${body}`;
    const query_params: Record<string, string> = {};
    const clickhouse_settings: Record<string, string | number> = {};
    for (const [name, value] of url.searchParams) {
      if (name.startsWith('param_')) query_params[name.slice('param_'.length)] = tsvUnescape(value);
      else if (!notSettings.has(name)) clickhouse_settings[name] = /^-?\d+$/.test(value) ? Number(value) : value;
    }
    const wanted = url.searchParams.get('database') ?? 'default';
    const { mayRun, ran } = inUrl === null ? releaseOf(body, '') : releaseOf(inUrl, body);
    await mayRun;
    const run = queue.then(async () => {
      if (wanted !== database) {
        await connection.command({ query: `USE ${wanted.replace(/[^A-Za-z0-9_]/g, '')}` });
        database = wanted;
      }
      const result = await connection.query({ query, query_params, clickhouse_settings } as Parameters<typeof connection.query>[0]);
      const chunks: Buffer[] = [];
      for await (const chunk of result.stream as Readable) chunks.push(Buffer.from(chunk as Buffer));
      return Buffer.concat(chunks);
    });
    queue = run.catch(() => undefined);
    void queue.then(ran);
    try {
      const out = await run;
      res.writeHead(200, { 'content-type': 'text/plain; charset=UTF-8' }).end(out);
    } catch (err) {
      const e = err as { code?: string; type?: string; message?: string; cause?: { message?: string } };
      const text = e.cause?.message ?? (e.code ? `Code: ${e.code}. DB::Exception: ${e.message} (${e.type ?? 'UNKNOWN'})` : String(e.message ?? err));
      res.writeHead(500, { 'content-type': 'text/plain; charset=UTF-8', 'x-clickhouse-exception-code': e.code ?? '1000' }).end(`${text}\n`);
    }
  };

  const server: Server = createServer((req, res) => void answer(req, res).catch((err: unknown) => res.writeHead(500).end(String(err))));
  await new Promise<void>((done) => server.listen(port, '127.0.0.1', done));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    hold(match) {
      return new Promise((parked) => (holding = { match, parked }));
    },
    async close() {
      const closed = new Promise<void>((done) => server.close(() => done()));
      server.closeAllConnections();
      await closed;
      await queue;
      await connection.close();
    },
  };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const [dir, port] = process.argv.slice(2);
  if (!dir) {
    console.error('usage: node test/support/clickhouseFront.ts <data dir> [port]');
    process.exit(2);
  }
  const front = await startClickHouseFront(dir, Number(port ?? 0));
  console.log(`clickhouse front listening on ${front.url}`);
  const stop = () => void front.close().then(() => process.exit(0));
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}
