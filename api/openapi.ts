import { readdirSync, readFileSync } from 'node:fs';
import { z } from 'zod';
import { errorCodes } from './errors.ts';
import type { CachedRoute } from './responseCache.ts';

/**
 * Names of the parts of responses that clients handle on their own, so that generated clients get
 * type names: per operation, the path from its response to the part (`[]` = an array's items).
 * Each response is named after its operation (prices -> PricesResponse), unless it is a part too.
 */
const namedParts: Record<string, Record<string, string>> = {
  prices: { 'prices[]': 'PriceEntry' },
  coins: { 'coins[]': 'Coin' },
  coinOhlc: { 'candles[]': 'Candle' },
  coinMarkets: { 'markets[]': 'Market' },
  exchanges: { 'exchanges[]': 'Exchange' },
  exchange: { 'exchange.markets[]': 'ExchangeMarket' },
  chains: { 'chains[]': 'Chain' },
  categories: { '[]': 'Category' },
  newCoins: { 'coins[]': 'NewCoin' },
  etfFlows: { 'assets[]': 'EtfAssetFlows', 'assets[].funds[]': 'EtfFund' },
  liquidations: { 'events[]': 'LiquidationEvent' },
};

const errorBody = z.object({
  error: z.object({
    code: z
      .enum(errorCodes)
      .describe(
        'machine-readable: bad_request (400, or 431 for a request line and headers over 16 KiB), missing_key and invalid_key (401), ' +
          'not_found (404), method_not_allowed (405), quota_exceeded (429), unavailable (503), internal (500: a bug; quote x-request-id)',
      ),
    message: z.string().describe('what went wrong, naming the parameter and its allowed values for a 400'),
    status: z.number().int().describe('the HTTP status'),
  }),
});

/** Response bodies captured from the demo (api/openapi-examples/capture.ts), by operationId; `errors` by status. */
const examplesDir = new URL('./openapi-examples/', import.meta.url);
const examples: Record<string, unknown> = Object.fromEntries(
  readdirSync(examplesDir)
    .filter((file) => file.endsWith('.json'))
    .map((file) => [file.slice(0, -'.json'.length), JSON.parse(readFileSync(new URL(file, examplesDir), 'utf8')) as unknown]),
);
const errorExamples = examples.errors as Record<string, unknown>;
const demoExample = (value: unknown) => ({ demo: { summary: 'From the demo (SIMULATED data; arrays cut to their first 3 items)', value } });

const integerHeader = (description: string, required: boolean) => ({ description, required, schema: { type: 'integer' } });
const stringHeader = (description: string, required: boolean) => ({ description, required, schema: { type: 'string' } });
const headers = {
  RateLimitLimit: integerHeader('requests allowed per key per hour', true),
  RateLimitRemaining: integerHeader('requests left in the current hour', true),
  RateLimitReset: integerHeader('seconds until the fixed hourly window resets', true),
  RequestId: stringHeader('the incoming x-request-id when sane (1-128 of A-Z a-z 0-9 . _ : -), else a generated UUID; quote it when reporting a problem', true),
  ETag: stringHeader('validator of this body and encoding: send it back in If-None-Match to get 304 while the data is unchanged', true),
  CacheControl: stringHeader("private, max-age = the endpoint's refresh interval; private, no-cache on a stale body", true),
  DataStale: integerHeader(
    'only when the store failed and a cached body (up to 15 min past its expiry) is served instead: its age in seconds',
    false,
  ),
  Age: integerHeader('with x-data-stale only: the same age in seconds', false),
  RetryAfter: integerHeader('seconds to wait before retrying', true),
  Allow: stringHeader('the methods the path answers: GET, HEAD', true),
  WwwAuthenticate: stringHeader('Bearer realm="mds"', true),
};
const ref = (kind: 'headers' | 'responses' | 'parameters' | 'schemas', name: string) => ({ $ref: `#/components/${kind}/${name}` });
const rateLimitHeaders = {
  'x-ratelimit-limit': ref('headers', 'RateLimitLimit'),
  'x-ratelimit-remaining': ref('headers', 'RateLimitRemaining'),
  'x-ratelimit-reset': ref('headers', 'RateLimitReset'),
};
const requestIdHeader = { 'x-request-id': ref('headers', 'RequestId') };

function errorResponse(status: number, description: string, extraHeaders: Record<string, unknown> = {}) {
  return {
    description,
    headers: { ...requestIdHeader, ...extraHeaders },
    content: { 'application/json': { schema: ref('schemas', 'Error'), examples: demoExample(errorExamples[status]) } },
  };
}

/** Responses every operation may get, by status, and the component that describes each. */
const sharedResponses: Record<number, [name: string, response: unknown]> = {
  304: [
    'NotModified',
    {
      description: 'Not Modified: the If-None-Match ETag is still current. No body; it counts against the quota',
      headers: { ETag: ref('headers', 'ETag'), 'Cache-Control': ref('headers', 'CacheControl'), ...rateLimitHeaders, ...requestIdHeader },
    },
  ],
  400: ['BadRequest', errorResponse(400, 'Bad request: a parameter is of the wrong type, out of range or not an allowed value. The message names it and what it allows', rateLimitHeaders)],
  401: ['Unauthorized', errorResponse(401, 'No key (missing_key), or an unknown or revoked key (invalid_key)', { 'WWW-Authenticate': ref('headers', 'WwwAuthenticate') })],
  404: ['NotFound', errorResponse(404, 'Not found: no such asset, exchange or ETF underlying', rateLimitHeaders)],
  405: ['MethodNotAllowed', errorResponse(405, 'Method not allowed: every path answers GET and HEAD only (HEAD like GET, without a body)', { Allow: ref('headers', 'Allow') })],
  429: [
    'QuotaExceeded',
    errorResponse(429, 'Quota exceeded: wait Retry-After seconds (the same as x-ratelimit-reset)', { 'Retry-After': ref('headers', 'RetryAfter'), ...rateLimitHeaders }),
  ],
  503: [
    'Unavailable',
    errorResponse(
      503,
      'Unavailable for now: the store cannot answer and nothing cached can stand in, or the keys or the quota cannot be checked ' +
        '(these three carry Retry-After), or a currency has no known rate, or the data is not loaded yet',
      { 'Retry-After': { ...headers.RetryAfter, required: false } },
    ),
  ],
};
const everyOperation = [304, 401, 405, 429, 503];

/** The schema a path names inside a response schema (see namedParts); throws when the path is not there. */
function partOf(response: z.ZodType, path: string, where: string): z.ZodType {
  let at: z.ZodType = response;
  for (const step of path.split('.')) {
    const [, key, items] = /^(\w*)(\[\])?$/.exec(step) ?? [];
    // Optional and nullable fields are named by what they hold.
    while (at instanceof z.ZodOptional || at instanceof z.ZodNullable) at = at.unwrap() as z.ZodType;
    if (key) {
      if (!(at instanceof z.ZodObject) || !(key in at.shape)) throw new Error(`${where}: the response has no field ${path}`);
      at = at.shape[key] as z.ZodType;
    }
    if (items) {
      if (!(at instanceof z.ZodArray)) throw new Error(`${where}: ${path} is not an array in the response`);
      at = at.element as z.ZodType;
    }
  }
  return at;
}

/** zod's int() bounds are the safe-integer range: they tell a reader nothing. */
function dropSafeIntegerBounds({ jsonSchema }: { jsonSchema: { minimum?: number; maximum?: number } }): void {
  if (jsonSchema.minimum === Number.MIN_SAFE_INTEGER) delete jsonSchema.minimum;
  if (jsonSchema.maximum === Number.MAX_SAFE_INTEGER) delete jsonSchema.maximum;
}

/** Every response schema and named part, once each, as JSON Schema 2020-12 (OpenAPI 3.1's dialect) with $refs between them. */
function namedSchemas(routes: readonly CachedRoute[]): { schemas: Record<string, unknown>; responseNames: Map<CachedRoute, string> } {
  const registry = z.registry<{ id: string }>();
  const name = (schema: z.ZodType, id: string) => {
    const named = registry.get(schema)?.id;
    if (named !== undefined && named !== id) throw new Error(`one schema named twice: ${named} and ${id}`);
    registry.add(schema, { id });
  };
  name(errorBody, 'Error');
  name(streamToken, 'StreamToken');
  for (const route of routes) {
    for (const [path, id] of Object.entries(namedParts[route.doc.operationId] ?? {})) name(partOf(route.doc.response, path, route.doc.operationId), id);
  }
  const responseNames = new Map<CachedRoute, string>();
  for (const route of routes) {
    const { operationId, response } = route.doc;
    if (!registry.has(response)) registry.add(response, { id: `${operationId[0]!.toUpperCase()}${operationId.slice(1)}Response` });
    responseNames.set(route, registry.get(response)!.id);
  }
  const { schemas } = z.toJSONSchema(registry, {
    io: 'output',
    unrepresentable: 'any',
    override: dropSafeIntegerBounds,
    uri: (id) => `#/components/schemas/${id}`,
  });
  // The document is their resource: no dialect nor $id of their own.
  const stripped = Object.fromEntries(Object.entries(schemas).map(([id, { $schema: _dialect, $id: _id, ...schema }]) => [id, schema]));
  return { schemas: stripped, responseNames };
}

/** JSON Schema of a request parameter, inline (parameters are small and not shared between types). */
function inputSchema(schema: z.ZodType): Record<string, unknown> {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any', override: dropSafeIntegerBounds }) as Record<string, unknown>;
  return rest;
}

function parameters(where: 'path' | 'query', shape: z.ZodObject | undefined) {
  return Object.entries(shape?.shape ?? {}).map(([name, field]) => {
    const { description, ...schema } = inputSchema(field as z.ZodType);
    // Reference pages show the schema's default apart from the text, or not at all: the text says it too.
    const text = [description, schema.default === undefined ? undefined : `Default: ${String(schema.default)}.`].filter(Boolean).join('. ');
    return {
      name,
      in: where,
      required: where === 'path' || !(field as z.ZodType).safeParse(undefined).success,
      ...(text ? { description: text } : {}),
      schema,
    };
  });
}

/** The stream's two HTTP faces (api/stream/streamServer.ts); its messages are in api/asyncapi.json. */
const streamToken = z.object({
  token: z.string().describe('pass as ?token= to GET /v1/stream; opens connections for 60 s, as the key it was made with'),
  expiresAt: z.number().int().describe('unix ms after which the token opens no connection'),
});
const streamPaths = {
  '/v1/stream/token': {
    post: {
      operationId: 'streamToken',
      tags: ['Stream'],
      summary: 'A short-lived token for browsers to open the stream with',
      description: 'Counts one request of the quota. Any replica sharing the server secret accepts the token; a key revoked since makes it void.',
      responses: {
        200: {
          description: 'OK',
          headers: { ...rateLimitHeaders, ...requestIdHeader, 'Cache-Control': stringHeader('no-store', true) },
          content: { 'application/json': { schema: ref('schemas', 'StreamToken'), examples: demoExample(examples.streamToken) } },
        },
        401: ref('responses', 'Unauthorized'),
        429: ref('responses', 'QuotaExceeded'),
        503: ref('responses', 'Unavailable'),
      },
    },
  },
  '/v1/stream': {
    get: {
      operationId: 'stream',
      tags: ['Stream'],
      summary: 'The live stream: a WebSocket (messages: /v1/asyncapi.json)',
      description:
        'Upgrade with the key in x-api-key or Authorization: Bearer, or with ?token= from POST /v1/stream/token. Opening a connection and each subscribe message count one request of the quota. ' +
        'A plain GET gets 426. A refused upgrade is answered with the error body: 401, 429 (the hourly quota, or the key already holds its connections on this replica), 503.',
      parameters: [{ name: 'token', in: 'query', required: false, description: 'a token from POST /v1/stream/token, instead of a key header', schema: { type: 'string' } }],
      responses: {
        101: { description: 'Switching Protocols: the WebSocket is open' },
        401: ref('responses', 'Unauthorized'),
        426: errorResponse(426, 'Upgrade Required: connect with a WebSocket client', { Upgrade: stringHeader('websocket', true) }),
        429: ref('responses', 'QuotaExceeded'),
        503: ref('responses', 'Unavailable'),
      },
    },
  },
};

const description = `Read-only crypto market data measured from our own venue collectors and on-chain indexing.

**Attribution**: crediting this service as the data provider is a condition of use, wherever you show or republish its data (e.g. "Market data: <this service's name>").

**Key**: every endpoint under \`/v1\` needs one, sent as \`x-api-key: <key>\` or \`Authorization: Bearer <key>\`. To try a request here, enter your key under Authentication (it stays in this page).

**Quota**: a number of requests per key per fixed hour (600 unless the operator set another); every answer to a valid key carries \`x-ratelimit-limit\`, \`x-ratelimit-remaining\` and \`x-ratelimit-reset\` (seconds). Past it: 429 \`quota_exceeded\` with \`Retry-After\`.

**Caching**: each endpoint's body is rebuilt once per its refresh interval (given with each endpoint) and carries an \`ETag\`: send it back in \`If-None-Match\` and get 304 while it is unchanged. When the store fails, a cached body up to 15 minutes past its expiry is served instead, with \`x-data-stale: <age in seconds>\`; with nothing cached, 503.

**Live stream**: \`GET /v1/stream\` is a WebSocket (subscribe to index prices, trades and current candles per asset); its messages are described in the AsyncAPI document [\`/v1/asyncapi.json\`](/v1/asyncapi.json). Browsers, which cannot set headers on a WebSocket, connect with \`?token=\` from \`POST /v1/stream/token\`.

**Errors** are always \`{"error":{"code","message","status"}}\` with \`x-request-id\`, also for requests the HTTP parser refuses (431 for a request line and headers over 16 KiB, 400 for a malformed request, 405 for CONNECT).`;

/**
 * The OpenAPI 3.1 document of the API, generated from the zod schemas the routes validate
 * requests with and type responses by, so it cannot drift from the code; its examples are
 * responses captured from the demo. `publicBaseUrl`: where clients reach the API (else `/`,
 * the origin the document is read from).
 */
export function openApiDocument(routes: readonly CachedRoute[], options: { publicBaseUrl?: string } = {}): Record<string, unknown> {
  const { schemas, responseNames } = namedSchemas(routes);
  const paths: Record<string, unknown> = {};
  for (const route of routes) {
    const { doc } = route;
    const statuses = [...new Set([...doc.errors, ...everyOperation])].sort((a, b) => a - b);
    paths[route.path.replace(/:(\w+)/g, '{$1}')] = {
      get: {
        operationId: doc.operationId,
        tags: [doc.tag],
        summary: doc.summary,
        description: `Data refresh: every ${route.refreshSeconds} s; responses are cached that long (If-None-Match with their ETag gets 304 meanwhile).`,
        parameters: [...parameters('path', doc.path), ...parameters('query', doc.query), ref('parameters', 'IfNoneMatch')],
        responses: {
          200: {
            description: 'OK',
            headers: {
              ...rateLimitHeaders,
              ...requestIdHeader,
              ETag: ref('headers', 'ETag'),
              'Cache-Control': ref('headers', 'CacheControl'),
              'x-data-stale': ref('headers', 'DataStale'),
              Age: ref('headers', 'Age'),
            },
            content: {
              'application/json': {
                schema: ref('schemas', responseNames.get(route)!),
                ...(examples[doc.operationId] === undefined ? {} : { examples: demoExample(examples[doc.operationId]) }),
              },
            },
          },
          ...Object.fromEntries(
            statuses.map((status) => {
              const shared = sharedResponses[status];
              if (!shared) throw new Error(`${doc.operationId}: status ${status} has no description in sharedResponses`);
              return [status, ref('responses', shared[0])];
            }),
          ),
        },
      },
    };
  }
  Object.assign(paths, streamPaths);
  return {
    openapi: '3.1.0',
    info: {
      title: 'Market data service',
      version: '1.0.0',
      description,
      license: { name: 'Free to use, with attribution to this service as the data provider' },
    },
    servers: [options.publicBaseUrl ? { url: options.publicBaseUrl } : { url: '/', description: 'this server' }],
    tags: [
      { name: 'Coins', description: 'Assets: prices, candles, charts, markets, profiles' },
      { name: 'Market', description: 'Exchanges, totals, chains, categories, listings, search' },
      { name: 'Indicators', description: 'ETF flows, market status, fear & greed, liquidations' },
      { name: 'Stream', description: 'The live WebSocket stream (messages: /v1/asyncapi.json)' },
    ],
    security: [{ apiKey: [] }, { bearer: [] }],
    paths,
    components: {
      securitySchemes: {
        apiKey: { type: 'apiKey', in: 'header', name: 'x-api-key', description: 'Your API key' },
        bearer: { type: 'http', scheme: 'bearer', description: 'Authorization: Bearer <key>' },
      },
      schemas,
      parameters: {
        IfNoneMatch: {
          name: 'If-None-Match',
          in: 'header',
          required: false,
          description: 'the ETag of a body you hold: 304 without a body while it is still current',
          schema: { type: 'string' },
        },
      },
      headers,
      responses: Object.fromEntries(Object.values(sharedResponses)),
    },
  };
}
