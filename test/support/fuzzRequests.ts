// Random API requests for fuzzing: paths (known routes with odd ids, and made-up ones), query
// parameters (known and unknown keys, odd values) and headers (every way to send a key, a wrong one,
// none; odd request ids; methods). The API's fuzz test and the soak's fuzzing client send them.
import fc from 'fast-check';

const segment = fc.oneof(
  fc.constantFrom('bitcoin', 'ethereum', 'no-such-coin', '', '..', '%', '%zz', '%00', 'BITCOIN', 'a'.repeat(300)),
  fc.string({ maxLength: 12 }).map(encodeURIComponent),
);
export const fuzzPath = fc.oneof(
  fc.constant('/v1/prices'),
  segment.map((id) => `/v1/coins/${id}/ohlc`),
  segment.map((id) => `/v1/coins/${id}/markets`),
  fc.constant('/v1/exchanges'),
  fc.constant('/v1/search'),
  segment.map((id) => `/v1/exchanges/${id}`),
  fc.constant('/v1/coins'),
  segment.map((id) => `/v1/coins/${id}`),
  segment.map((id) => `/v1/coins/${id}/chart`),
  fc.constant('/v1/global'),
  fc.constant('/v1/categories'),
  fc.constant('/v1/market-status'),
  fc.constant('/v1/fear-greed/history'),
  fc.constant('/v1/liquidations'),
  fc.constant('/v1/new-coins'),
  fc.constant('/v1/chains'),
  fc.constant('/v1/etf-flows'),
  segment.map((asset) => `/v1/etf-flows/${asset}`),
  fc.array(segment, { maxLength: 4 }).map((parts) => `/v1/${parts.join('/')}`),
  fc.array(segment, { maxLength: 3 }).map((parts) => `/${parts.join('/')}`),
);
const value = fc.oneof(
  fc.constantFrom('1m', '1h', '1w', 'usd', 'eur', 'btc', 'bitcoin,ethereum', ',', '', '-1', '1e309', 'true', '[]'),
  fc.string({ maxLength: 20 }),
);
export const fuzzQuery = fc.dictionary(fc.constantFrom('ids', 'interval', 'vs', 'limit', 'page', 'offset', 'q', 'x', 'ids[]', '__proto__', 'constructor', 'range', 'metric', 'sparkline', 'all', 'venue'), value, { maxKeys: 4 });
export const fuzzHeaders = fc.record(
  {
    auth: fc.constantFrom('x-api-key', 'bearer', 'none', 'wrong', 'empty-bearer'),
    requestId: fc.option(fc.string({ maxLength: 200 }).filter((s) => /^[\x20-\x7e]*$/.test(s))),
    method: fc.constantFrom('GET', 'GET', 'GET', 'HEAD', 'POST', 'DELETE', 'OPTIONS'),
  },
  { requiredKeys: ['auth', 'method'] },
);

export type FuzzedRequest = [path: string, query: Record<string, string>, headers: { auth: string; requestId?: string | null; method: string }];

/** One request of each sample: every path, query and header combination. */
export const fuzzRequest = fc.tuple(fuzzPath, fuzzQuery, fuzzHeaders);

/** The URL and fetch options of a fuzzed request to `base` with the valid `key`. */
export function fuzzFetch(base: string, key: string, [path, query, h]: FuzzedRequest): { url: string; init: RequestInit } {
  const search = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) search.append(k, v);
  const headers: Record<string, string> = {};
  if (h.auth === 'x-api-key') headers['x-api-key'] = key;
  if (h.auth === 'bearer') headers.authorization = `Bearer ${key}`;
  if (h.auth === 'wrong') headers['x-api-key'] = 'mds_not_a_key';
  if (h.auth === 'empty-bearer') headers.authorization = 'Bearer ';
  if (h.requestId) headers['x-request-id'] = h.requestId;
  return { url: `${base}${path}?${search}`, init: { method: h.method, headers } };
}
