// The read-only SQL endpoint (infra/sql/sqlServer.ts) over a real chDB store, spoken to as data
// engineers do: curl-style GETs with basic auth, @clickhouse/client with a parameterised query and a
// Parquet stream. Every write, every read of the keys table (however it is spelled or wrapped), the
// table functions that reach other tables, files or the network, and settings that would lift a
// limit are refused with ClickHouse's own errors; the service's own session stays writable.
import { randomBytes } from 'node:crypto';
import { readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { createClient, type ClickHouseClient } from '@clickhouse/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTestStore, silentLog, testConfig, trade } from '../../../test/support/harness.ts';
import { until } from '../../../test/support/until.ts';
import { statusGroups } from '../clickhouseError.ts';
import { credentialCheck, loadReaderPassword, sqlPasswordFileName } from '../readerPassword.ts';
import type { ReaderLimits } from '../readerSettings.ts';
import { startSqlServer, type SqlServer } from '../sqlServer.ts';

const password = randomBytes(18).toString('base64url');
/** Stands in for a key hash: it must never come back through the endpoint. */
const secretMarker = 'f00dfeed'.repeat(8);
const limits: ReaderLimits = { max_execution_time: 5, max_result_rows: 100_000, max_result_bytes: 50_000_000, max_memory_usage: 500_000_000, max_threads: 1 };
let env: Awaited<ReturnType<typeof openTestStore>>;
let server: SqlServer;
let client: ClickHouseClient;
const now = Date.now() - 120_000;
const trades = [
  trade({ venue: 'binance', market: 'BTCUSDT', asset: 'bitcoin', quote: 'USDT', trade_id: '1', ts: now, price: 100, quantity: 1 }),
  trade({ venue: 'binance', market: 'BTCUSDT', asset: 'bitcoin', quote: 'USDT', trade_id: '2', ts: now + 1000, price: 101, quantity: 2 }),
  trade({ venue: 'okx', market: 'ETH-USDT', asset: 'ethereum', quote: 'USDT', trade_id: '3', ts: now + 2000, price: 10, quantity: 3 }),
];

beforeAll(async () => {
  env = await openTestStore();
  await env.store.insert('trades', trades);
  await env.store.client.command({
    query: `INSERT INTO api_keys (key_hash, prefix, name, created_at, version) VALUES ({hash:String}, 'mds_', 'test', now64(3), 1)`,
    query_params: { hash: secretMarker },
  });
  // Views made by the service (as a migration would), over the keys table and over that view.
  await env.store.client.command({ query: 'CREATE VIEW keys_view AS SELECT key_hash FROM api_keys' });
  await env.store.client.command({ query: 'CREATE VIEW keys_view_of_view AS SELECT * FROM mds.keys_view' });
  server = await startSqlServer({ path: env.dir, database: 'mds', host: '127.0.0.1', port: 0, user: 'reader', password, limits, maxConcurrentQueries: 1, connections: testConfig(), log: silentLog });
  client = createClient({ url: server.url, username: 'reader', password });
}, 60_000);
afterAll(async () => {
  await client?.close();
  await server?.close();
  await env?.dispose();
});

const basic = (user: string, pass: string) => ({ authorization: `Basic ${Buffer.from(`${user}:${pass}`).toString('base64')}` });

/** A request as curl sends it: the SQL in `query=`, basic auth. */
async function get(query: string, extra: Record<string, string> = {}, headers: Record<string, string> = basic('reader', password)) {
  const res = await fetch(`${server.url}/?${new URLSearchParams({ query, ...extra })}`, { headers });
  const bytes = Buffer.from(await res.arrayBuffer());
  return { status: res.status, code: res.headers.get('x-clickhouse-exception-code'), format: res.headers.get('x-clickhouse-format'), text: bytes.toString('utf8'), bytes };
}

/** A POST with the SQL as the body, as clients send longer queries. */
async function post(query: string, extra: Record<string, string> = {}) {
  const res = await fetch(`${server.url}/?${new URLSearchParams(extra)}`, { method: 'POST', body: query, headers: basic('reader', password) });
  return { status: res.status, code: res.headers.get('x-clickhouse-exception-code'), text: await res.text() };
}

describe('a data engineer connects', () => {
  it('answers a curl-style count with basic auth, in TabSeparated by default', async () => {
    const [expected] = await env.store.rows<{ n: number }>('SELECT count() AS n FROM trades');
    const res = await get('SELECT count() FROM trades');
    expect(res.status).toBe(200);
    expect(res.format).toBe('TabSeparated');
    expect(res.text).toBe(`${expected!.n}\n`);
    expect(expected!.n).toBe(trades.length);
  });

  it('takes the X-ClickHouse-User/Key headers and user/password URL parameters as well', async () => {
    expect((await get('SELECT 1', {}, { 'x-clickhouse-user': 'reader', 'x-clickhouse-key': password })).text).toBe('1\n');
    expect((await get('SELECT 1', { user: 'reader', password }, {})).text).toBe('1\n');
    expect((await post('SELECT 2')).text).toBe('2\n');
  });

  it('refuses a wrong password, another user and no credentials with ClickHouse AUTHENTICATION_FAILED (403)', async () => {
    for (const headers of [basic('reader', `${password}x`), basic('default', password), {}]) {
      const res = await get('SELECT 1', {}, headers);
      expect(res.status).toBe(403);
      expect(res.code).toBe('516');
      expect(res.text).toMatch(/^Code: 516\. DB::Exception: \w+: Authentication failed: password is incorrect, or there is no user with such name\. \(AUTHENTICATION_FAILED\)\n$/);
      expect(res.text).not.toContain(password);
    }
    expect((await get('SELECT 1', { user: 'reader', password: 'wrong' }, {})).status).toBe(403);
  });

  it('runs a parameterised query through @clickhouse/client', async () => {
    const result = await client.query({ query: 'SELECT count() AS n, sum(quantity) AS q FROM trades WHERE asset = {asset:String}', query_params: { asset: 'bitcoin' }, format: 'JSONEachRow' });
    const rows = await result.json<{ n: string | number; q: number }>();
    expect(rows.map((r) => ({ n: Number(r.n), q: r.q }))).toEqual([{ n: 2, q: 3 }]);
    // A value with quotes and escapes arrives as it was sent.
    const odd = await client.query({ query: 'SELECT {s:String} AS s', query_params: { s: "it's a\ttab\\" }, format: 'JSONEachRow' });
    expect(await odd.json()).toEqual([{ s: "it's a\ttab\\" }]);
  });

  it('streams a Parquet file of candles_1m through @clickhouse/client', async () => {
    const [candles] = await env.store.rows<{ n: number }>('SELECT count() AS n FROM candles_1m');
    expect(candles!.n).toBeGreaterThan(0);
    // The finalised candles, as infra/SCHEMA.md says to read them (the raw states have no Parquet type).
    const query = `SELECT asset, bucket, argMinMerge(open) AS open, max(high) AS high, min(low) AS low, argMaxMerge(close) AS close, sum(volume) AS volume
                   FROM candles_1m WHERE asset = {asset:String} GROUP BY asset, bucket ORDER BY bucket`;
    // A file download is `exec` with FORMAT Parquet: its stream is the raw body (clickhouse-js's example select_parquet_as_file).
    const { stream } = await client.exec({ query: `${query} FORMAT Parquet`, query_params: { asset: 'bitcoin' } });
    const chunks: Buffer[] = [];
    for await (const chunk of stream as AsyncIterable<Buffer>) chunks.push(Buffer.from(chunk));
    const file = Buffer.concat(chunks);
    expect(file.subarray(0, 4).toString('latin1')).toBe('PAR1');
    expect(file.subarray(-4).toString('latin1')).toBe('PAR1');
  });

  it('answers the JSON formats, CSV/TSV with names and Arrow, by FORMAT or default_format', async () => {
    const json = JSON.parse((await get('SELECT asset, count() AS n FROM trades GROUP BY asset ORDER BY asset FORMAT JSON')).text) as { data: unknown[]; rows: number };
    expect(json.rows).toBe(2);
    expect((await get('SELECT asset FROM trades ORDER BY trade_id', { default_format: 'JSONEachRow' })).text).toBe('{"asset":"bitcoin"}\n{"asset":"bitcoin"}\n{"asset":"ethereum"}\n');
    expect(JSON.parse((await get('SELECT 1 AS a FORMAT JSONCompact')).text).data).toEqual([[1]]);
    expect((await get("SELECT 'x' AS a, 2 AS b FORMAT CSVWithNames")).text).toBe('"a","b"\n"x",2\n');
    expect((await get("SELECT 'x' AS a, 2 AS b", { default_format: 'TSVWithNames' })).text).toBe('a\tb\nx\t2\n');
    const arrow = await get('SELECT * FROM trades FORMAT Arrow');
    expect(arrow.format).toBe('Arrow');
    expect(arrow.bytes.subarray(0, 6).toString('latin1')).toBe('ARROW1');
  });

  it('answers GET /ping and a bare GET / with Ok.', async () => {
    expect(await (await fetch(`${server.url}/ping`)).text()).toBe('Ok.\n');
    expect(await (await fetch(`${server.url}/`)).text()).toBe('Ok.\n');
  });
});

describe('read-only', () => {
  it('refuses writes, DDL, SYSTEM and SET with the engine READONLY error, and nothing changes', async () => {
    const statements = [
      "INSERT INTO trades (venue, market, asset, quote, trade_id, ts, received_at, price, quantity, side) VALUES ('x', 'X', 'x', 'USD', '9', now64(3), now64(3), 1, 1, 'buy')",
      'DROP TABLE trades',
      'TRUNCATE TABLE trades',
      'ALTER TABLE trades DELETE WHERE 1',
      'CREATE TABLE evil (x UInt8) ENGINE = Memory',
      'SYSTEM DROP MARK CACHE',
      'SET readonly = 0',
      'SELECT 1 SETTINGS readonly = 0',
      'SELECT 1 SETTINGS max_execution_time = 1000',
    ];
    for (const sql of statements) {
      const res = await post(sql);
      expect({ sql, status: res.status, code: res.code }).toEqual({ sql, status: 500, code: '164' });
      expect(res.text).toMatch(/^Code: 164\. DB::Exception: .*\(READONLY\)/);
    }
    const [after] = await env.store.rows<{ n: number }>('SELECT count() AS n FROM trades');
    expect(after!.n).toBe(trades.length);
  });

  it('leaves the service its own writable session', async () => {
    await get('SELECT 1');
    const extra = trade({ venue: 'kraken', market: 'XBT/USD', asset: 'bitcoin', quote: 'USD', trade_id: '4', ts: now + 3000, price: 102, quantity: 1 });
    await env.store.insert('trades', [extra]);
    const [after] = await env.store.rows<{ n: number }>("SELECT count() AS n FROM trades WHERE venue = 'kraken'");
    expect(after!.n).toBe(1);
    await env.store.client.command({ query: "ALTER TABLE trades DELETE WHERE venue = 'kraken'", clickhouse_settings: { mutations_sync: '2' } });
  });
});

describe('secrets and what reaches outside', () => {
  const refusedReads = [
    'SELECT * FROM api_keys',
    'SELECT key_hash FROM mds.api_keys',
    'SELECT * FROM "api_keys"',
    'SELECT * FROM `mds`.`api_keys`',
    'SELECT * FROM (SELECT * FROM api_keys)',
    'SELECT (SELECT any(key_hash) FROM api_keys)',
    'SELECT 1 WHERE 1 IN (SELECT 1 FROM api_keys)',
    "SELECT 1 WHERE 'x' IN api_keys",
    'WITH k AS (SELECT * FROM api_keys) SELECT * FROM k',
    'SELECT 1 UNION ALL SELECT length(key_hash) FROM api_keys',
    'SELECT * FROM trades AS t JOIN api_keys AS k ON 1 = 1',
    'SELECT * FROM view(SELECT * FROM api_keys)',
    "SELECT * FROM merge('mds', '^api')",
    "SELECT * FROM merge(currentDatabase(), 'keys')",
    "SELECT * FROM mergeTreeIndex('mds', 'api_keys')",
    "SELECT * FROM cluster('default', 'mds', 'api_keys')",
    "SELECT * FROM remote('127.0.0.1', 'mds', 'api_keys')",
    'DESCRIBE TABLE api_keys',
    'SHOW CREATE TABLE api_keys',
    'EXPLAIN SELECT * FROM api_keys',
    'SELECT * FROM system.processes',
    'SELECT * FROM system.query_log',
    'SELECT * FROM system.asynchronous_inserts',
    "SELECT file('/etc/passwd')",
    "SELECT * FROM file('/etc/passwd', 'LineAsString')",
    "SELECT * FROM url('http://127.0.0.1:9/', 'LineAsString')",
    "SELECT * FROM s3('http://127.0.0.1:9/x.csv')",
    "SELECT dictGet('any', 'x', 1)",
    "SELECT joinGet('mds.api_keys', 'key_hash', 1)",
    'SELECT * FROM keys_view',
    'SELECT key_hash FROM mds.keys_view_of_view',
    `SELECT 1 WHERE '${secretMarker}' IN keys_view_of_view`,
  ];
  it.each(refusedReads)('refuses %s with a ClickHouse error and no secret', async (sql) => {
    for (const res of [await get(sql), await post(sql)]) {
      expect(res.status).toBeGreaterThanOrEqual(400);
      expect(['497', '164']).toContain(res.code);
      expect(res.text).toMatch(/^Code: (497|164)\. DB::Exception: .*\((ACCESS_DENIED|READONLY)\)\n$/);
      expect(res.text).not.toContain(secretMarker);
      expect(res.text).not.toContain('root:');
    }
  });

  it('reaches no table through a case variant of its name (table names are case-sensitive)', async () => {
    for (const sql of ['select KEY_HASH from Api_Keys', 'SELECT * FROM MDS.API_KEYS', 'SELECT * FROM mds.API_keys']) {
      const res = await get(sql);
      expect(['497', '60', '81']).toContain(res.code);
      expect(res.text).not.toContain(secretMarker);
    }
  });

  it('refuses a table named through a query parameter of type Identifier', async () => {
    const res = await get('SELECT * FROM {t:Identifier}', { param_t: 'api_keys' });
    expect(res.code).toBe('497');
    expect(res.text).not.toContain(secretMarker);
  });

  it('refuses a multi-statement request whole', async () => {
    const res = await post('SELECT 1; SELECT * FROM api_keys');
    expect(res.code).toBe('62');
    expect(res.text).not.toContain(secretMarker);
  });

  it('lets the catalog through: tables, columns, information_schema, and the view over the index', async () => {
    const tables = (await get("SELECT name FROM system.tables WHERE database = 'mds' AND name = 'trades'")).text;
    expect(tables).toBe('trades\n');
    expect((await get("SELECT count() > 0 FROM system.columns WHERE database = 'mds' AND table = 'trades'")).text).toBe('1\n');
    expect((await get("SELECT table_name FROM information_schema.tables WHERE table_schema = 'mds' AND table_name = 'candles_1m'")).text).toBe('candles_1m\n');
    expect((await get('SELECT count() >= 0 FROM index_price_history')).status).toBe(200);
    expect((await get('SELECT count() FROM numbers(10)')).text).toBe('10\n');
  });
});

describe('limits', () => {
  it('cuts a query past its time limit with TIMEOUT_EXCEEDED (159, HTTP 408)', async () => {
    const started = performance.now();
    const res = await get('SELECT count() FROM numbers(1000000000000)', { max_execution_time: '1' });
    expect(res.status).toBe(408);
    expect(res.code).toBe('159');
    expect(res.text).toMatch(/^Code: 159\. DB::Exception: Timeout exceeded/);
    expect(performance.now() - started).toBeLessThan(4_000);
  });

  it('runs every query read-only under the configured limits', async () => {
    const res = await get("SELECT getSetting('readonly'), getSetting('max_execution_time'), getSetting('max_result_rows'), getSetting('max_result_bytes'), getSetting('max_memory_usage'), getSetting('max_threads')");
    expect(res.text.trim().split('\t').map(Number)).toEqual([1, limits.max_execution_time, limits.max_result_rows, limits.max_result_bytes, limits.max_memory_usage, limits.max_threads]);
  });

  it('refuses to raise a limit or to change another setting, and applies a lowered one', async () => {
    const raised = await get('SELECT 1', { max_execution_time: '6' });
    expect(raised.code).toBe('452');
    expect((await get('SELECT 1', { max_result_rows: '0' })).code).toBe('452');
    const other = await get('SELECT 1', { readonly: '0' });
    expect(other.code).toBe('164');
    expect(other.text).toContain("Cannot modify 'readonly' setting in readonly mode");
    expect((await get('SELECT 1', { format_schema: '/etc/passwd' })).code).toBe('164');
    const lowered = await get('SELECT number FROM numbers(5)', { max_result_rows: '2' });
    expect(lowered.code).toBe('396');
    expect((await get('SELECT number FROM numbers(2)', { max_result_rows: '2' })).text).toBe('0\n1\n');
    // An output setting passes.
    expect((await get('SELECT toUInt64(1) AS n FORMAT JSONEachRow', { output_format_json_quote_64bit_integers: '1' })).text).toBe('{"n":"1"}\n');
  });

  it('refuses a query past the concurrent cap with TOO_MANY_SIMULTANEOUS_QUERIES (202)', async () => {
    const slow = get('SELECT sleepEachRow(1) FROM numbers(2)');
    let refused: Awaited<ReturnType<typeof get>> | undefined;
    await until(async () => {
      const res = await get('SELECT 1');
      if (res.code === '202') refused = res;
      return refused !== undefined;
    }, 'a query refused while the slow one runs');
    expect(refused!.text).toBe('Code: 202. DB::Exception: Too many simultaneous queries for user reader. Current: 1, maximum: 1. (TOO_MANY_SIMULTANEOUS_QUERIES)\n');
    expect((await slow).status).toBe(200);
    expect((await get('SELECT 1')).text).toBe('1\n');
  });
});

describe('the protocol facts', () => {
  it('maps codes to the statuses of ClickHouse, with the numbers the engine gives their names', async () => {
    const pairs = Object.values(statusGroups).flatMap((codes) => Object.entries(codes));
    const names = await env.store.rows<{ code: number; name: string }>('SELECT number AS code, errorCodeToName(number) AS name FROM numbers(1000) WHERE code IN {codes:Array(UInt16)}', { codes: pairs.map(([, code]) => code) });
    const byCode = new Map(names.map((r) => [Number(r.code), r.name]));
    expect(pairs.filter(([name, code]) => byCode.get(code) !== name)).toEqual([]);
  });
});

describe('the reader password', () => {
  it('is generated once into <MDS_DATA_DIR>/sql-password, owner-only, and kept', () => {
    const file = join(env.dir, sqlPasswordFileName);
    rmSync(file, { force: true });
    const first = loadReaderPassword({ MDS_DATA_DIR: env.dir });
    expect(first.file).toBe(file);
    expect(first.password.length).toBeGreaterThanOrEqual(16);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readFileSync(file, 'utf8').trim()).toBe(first.password);
    expect(loadReaderPassword({ MDS_DATA_DIR: env.dir }).password).toBe(first.password);
    expect(loadReaderPassword({ MDS_DATA_DIR: env.dir, SQL_PASSWORD: 'given-password-0123' })).toEqual({ password: 'given-password-0123' });
  });

  it('is checked with its user, both exactly', () => {
    const check = credentialCheck('reader', 'pw-0123456789abcdef');
    expect(check('reader', 'pw-0123456789abcdef')).toBe(true);
    expect(check('reader', 'pw-0123456789abcdeF')).toBe(false);
    expect(check('Reader', 'pw-0123456789abcdef')).toBe(false);
    expect(check('reader', '')).toBe(false);
  });
});
