import { ClickHouseError } from './clickhouseError.ts';

/** The bounds every reader query runs under (SQL_MAX_* in infra/config.ts): the reader may lower them, never raise them. */
export interface ReaderLimits {
  max_execution_time: number;
  max_result_rows: number;
  max_result_bytes: number;
  max_memory_usage: number;
  max_threads: number;
}

/**
 * URL parameters of ClickHouse's HTTP interface that are not engine settings: the request's own
 * (query, credentials, database, format) and the HTTP layer's, which clients such as the JDBC
 * driver and clickhouse-js send (compress, wait_end_of_query...); accepted, and the HTTP-layer ones ignored.
 */
const notSettings = new Set([
  'query', 'query_id', 'database', 'default_format', 'session_id', 'session_timeout', 'session_check', 'role', 'user', 'password', 'quota_key',
  'compress', 'decompress', 'buffer_size', 'wait_end_of_query', 'send_progress_in_http_headers', 'enable_http_compression', 'client_protocol_version',
  'http_headers_progress_interval_ms', 'http_response_buffer_size', 'http_zlib_compression_level', 'http_native_compression_disable_checksumming_on_decompress',
]);

/** True when a URL parameter is a setting of the query (not `param_*`, not one of the HTTP layer's). */
export const isSetting = (name: string) => !name.startsWith('param_') && !notSettings.has(name);

/**
 * Settings a reader may give that shape the output only: nothing here reads a file (format_schema,
 * format_template_* name files on the server), reaches the network or lifts a limit.
 */
const outputPrefixes = ['output_format_json_', 'output_format_csv_', 'output_format_tsv_', 'output_format_parquet_', 'output_format_arrow_', 'output_format_pretty_'];
const outputSettings = new Set(['format_csv_delimiter', 'date_time_output_format', 'output_format_decimal_trailing_zeros', 'extremes', 'join_use_nulls', 'session_timezone', 'result_overflow_mode']);
const isOutputSetting = (name: string) => outputSettings.has(name) || outputPrefixes.some((p) => name.startsWith(p));

/** A setting value as SET takes it: a number as is, anything else a quoted string ('' doubles a quote). */
function literal(value: string): string {
  return /^-?\d+(\.\d+)?$/.test(value) ? value : `'${value.replace(/\\/g, '\\\\').replace(/'/g, "''")}'`;
}

/**
 * The SET statements a reader query's session runs before `readonly = 1`: the limits (lowered
 * where the request asks), then the output settings the request gives. A setting outside these
 * is refused as ClickHouse refuses it in readonly mode; a limit above its bound as a constraint
 * violation; `result_overflow_mode` stays `throw` (`break` would return a cut result as if whole).
 */
export function sessionSettings(requested: ReadonlyMap<string, string>, limits: ReaderLimits): string[] {
  const applied: Record<string, string> = Object.fromEntries(Object.entries(limits).map(([name, bound]) => [name, String(bound)]));
  for (const [name, value] of requested) {
    if (name in limits) applied[name] = String(lowered(name, value, limits[name as keyof ReaderLimits]));
    else if (name === 'result_overflow_mode' && value !== 'throw') throw ClickHouseError.of('SETTING_CONSTRAINT_VIOLATION', `Setting ${name} should not be changed`);
    else if (isOutputSetting(name) && /^[a-z_0-9]+$/.test(name)) applied[name] = literal(value);
    else throw ClickHouseError.of('READONLY', `Cannot modify '${name}' setting in readonly mode`);
  }
  return Object.entries(applied).map(([name, value]) => `SET ${name} = ${value}`);
}

/** A requested limit: a positive number at most its bound (0, unlimited in ClickHouse, would lift it). */
function lowered(name: string, value: string, bound: number): number {
  const n = Number(value);
  if (!Number.isFinite(n) || value.trim() === '') throw ClickHouseError.of('SETTING_CONSTRAINT_VIOLATION', `Setting ${name} should be a number, not '${value}'`);
  if (n <= 0 || n > bound) throw ClickHouseError.of('SETTING_CONSTRAINT_VIOLATION', `Setting ${name} should not be greater than ${bound} nor 0 (unlimited)`);
  return n;
}
