import { z } from 'zod';
import type { CachedRoute } from './responseCache.ts';

const errorCodes: Record<number, { description: string; codes: string[] }> = {
  400: { description: 'A parameter is of the wrong type, out of range or not an allowed value; the message names it', codes: ['bad_request'] },
  401: { description: 'No key, or a key that is unknown or revoked', codes: ['missing_key', 'invalid_key'] },
  404: { description: 'No such asset', codes: ['not_found'] },
  429: { description: 'More than the hourly quota; wait x-ratelimit-reset seconds (also in Retry-After)', codes: ['quota_exceeded'] },
  503: { description: 'The data is temporarily unavailable; retry after a few seconds', codes: ['unavailable'] },
};

const errorBody = z.object({
  error: z.object({
    code: z.string().describe('machine-readable'),
    message: z.string(),
    status: z.number().int().describe('the HTTP status'),
  }),
});

const integerHeader = (description: string) => ({ description, schema: { type: 'integer' } });
const successHeaders = {
  'x-ratelimit-limit': integerHeader('requests allowed per key per hour'),
  'x-ratelimit-remaining': integerHeader('requests left in the current hour'),
  'x-ratelimit-reset': integerHeader('seconds until the hourly window resets'),
  'x-request-id': { description: 'echoes a sane incoming x-request-id, else a generated one', schema: { type: 'string' } },
  ETag: { description: 'send it back in If-None-Match to get 304 while the data is unchanged', schema: { type: 'string' } },
  'Cache-Control': { description: 'private, max-age = the endpoint\'s refresh interval', schema: { type: 'string' } },
};

/** JSON Schema 2020-12 (OpenAPI 3.1's dialect) of a zod schema, as requests or responses see it. */
function jsonSchema(schema: z.ZodType, io: 'input' | 'output'): Record<string, unknown> {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as Record<string, unknown>;
  return rest;
}

function parameters(where: 'path' | 'query', shape: z.ZodObject | undefined) {
  return Object.entries(shape?.shape ?? {}).map(([name, field]) => {
    const schema = jsonSchema(field as z.ZodType, 'input');
    const { description, ...withoutDescription } = schema;
    return {
      name,
      in: where,
      required: where === 'path' || !(field as z.ZodType).safeParse(undefined).success,
      ...(description ? { description } : {}),
      schema: withoutDescription,
    };
  });
}

/**
 * The OpenAPI 3.1 document of the API, generated from the zod schemas the routes validate
 * requests with and type responses by, so it cannot drift from the code.
 */
export function openApiDocument(routes: readonly CachedRoute[]): Record<string, unknown> {
  const paths: Record<string, unknown> = {};
  for (const route of routes) {
    const { doc } = route;
    const statuses = [...new Set([...doc.errors, 401, 429])].sort();
    paths[route.path.replace(/:(\w+)/g, '{$1}')] = {
      get: {
        operationId: doc.operationId,
        tags: [doc.tag],
        summary: doc.summary,
        description: `Data refresh: every ${route.refreshSeconds} s; responses are cached that long.`,
        parameters: [...parameters('path', doc.path), ...parameters('query', doc.query)],
        responses: {
          200: {
            description: 'OK',
            headers: successHeaders,
            content: { 'application/json': { schema: jsonSchema(doc.response, 'output') } },
          },
          ...Object.fromEntries(
            statuses.map((status) => [
              status,
              {
                description: `${errorCodes[status]!.description} (code: ${errorCodes[status]!.codes.join(' or ')})`,
                headers: { 'x-request-id': successHeaders['x-request-id'] },
                content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
              },
            ]),
          ),
        },
      },
    };
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Market data service',
      version: '1.0.0',
      description:
        'Read-only crypto market data measured from our own venue collectors. Every endpoint needs an API key. ' +
        'Attribution to the service as the data provider is a condition of use.',
    },
    tags: [
      { name: 'Coins', description: 'Assets: prices, candles' },
      { name: 'Market', description: 'Exchanges and aggregates' },
      { name: 'Indicators', description: 'Derived indicators' },
    ],
    security: [{ apiKey: [] }, { bearer: [] }],
    paths,
    components: {
      securitySchemes: {
        apiKey: { type: 'apiKey', in: 'header', name: 'x-api-key' },
        bearer: { type: 'http', scheme: 'bearer', description: 'Authorization: Bearer <key>' },
      },
      schemas: { Error: jsonSchema(errorBody, 'output') },
    },
  };
}
