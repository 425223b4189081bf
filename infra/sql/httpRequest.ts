import type { IncomingMessage } from 'node:http';
import { ClickHouseError } from './clickhouseError.ts';
import { isSetting } from './readerSettings.ts';

/**
 * Clients send `param_*` values in ClickHouse's escaped text form (TSV escapes); chDB escapes what
 * it is bound to, so the escapes are undone once here. Shared with test/support/clickhouseFront.ts.
 */
const unescapes: Record<string, string> = { '\\': '\\', t: '\t', n: '\n', r: '\r', '0': '\0', b: '\b', f: '\f', "'": "'" };
export const tsvUnescape = (value: string) => value.replace(/\\(.)/gs, (whole, c: string) => unescapes[c] ?? whole);

/** Longest query text (URL and body together) taken: ClickHouse's HTTP interface bounds the URL at 1 MiB too. */
export const maxQueryBytes = 1_048_576;

/** Credentials as a ClickHouse client sends them: X-ClickHouse-User/Key headers, basic auth, or user/password URL parameters. */
export function credentialsOf(req: IncomingMessage, url: URL): { user: string; password: string } {
  const headerUser = req.headers['x-clickhouse-user'];
  if (typeof headerUser === 'string') return { user: headerUser, password: String(req.headers['x-clickhouse-key'] ?? '') };
  const basic = /^Basic\s+(\S+)$/i.exec(req.headers.authorization ?? '');
  if (basic) {
    const decoded = Buffer.from(basic[1]!, 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    return colon < 0 ? { user: decoded, password: '' } : { user: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
  }
  // No user named: ClickHouse takes the user `default`.
  return { user: url.searchParams.get('user') ?? 'default', password: url.searchParams.get('password') ?? '' };
}

/** The body, up to maxQueryBytes; past it ClickHouse's QUERY_IS_TOO_LARGE. */
export async function readBody(req: IncomingMessage, limit = maxQueryBytes): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > limit) throw ClickHouseError.of('QUERY_IS_TOO_LARGE', `Query is too large (${size}). max_query_size = ${limit}`);
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** The parts of a query request: SQL (`query=` then the body), `param_*` values, settings, database and default format. */
export function queryOf(url: URL, body: string) {
  const inUrl = url.searchParams.get('query');
  const query = [inUrl, body].filter((part) => part !== null && part.trim() !== '').join('\n');
  const params: Record<string, string> = {};
  const settings = new Map<string, string>();
  for (const [name, value] of url.searchParams) {
    if (name.startsWith('param_')) params[name.slice('param_'.length)] = tsvUnescape(value);
    else if (isSetting(name)) settings.set(name, value);
  }
  return { query, params, settings, database: url.searchParams.get('database') ?? undefined, defaultFormat: url.searchParams.get('default_format') ?? undefined };
}
