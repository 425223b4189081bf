import type { ErrorRequestHandler, RequestHandler } from 'express';
import type { z } from 'zod';
import { requestLog } from './requestId.ts';

/** Every `error.code` the API sends: the enum of the OpenAPI document, and the only codes an ApiError takes. */
export const errorCodes = ['bad_request', 'missing_key', 'invalid_key', 'not_found', 'method_not_allowed', 'quota_exceeded', 'unavailable', 'internal'] as const;
export type ErrorCode = (typeof errorCodes)[number];

/** The one error body of the API (spec section 7). */
export interface ErrorBody {
  error: { code: string; message: string; status: number };
}

/** An error meant for the client: its status, code and message are sent as they are. */
export class ApiError extends Error {
  override name = 'ApiError';
  readonly status: number;
  readonly code: ErrorCode;
  /** Extra response headers, e.g. Retry-After on 429 or Allow on 405. */
  readonly headers: Readonly<Record<string, string>>;

  constructor(status: number, code: ErrorCode, message: string, headers: Record<string, string> = {}) {
    super(message);
    this.status = status;
    this.code = code;
    this.headers = headers;
  }

  body(): ErrorBody {
    return { error: { code: this.code, message: this.message, status: this.status } };
  }
}

/**
 * Parses request input with a zod schema; the first issue becomes 400 bad_request naming the
 * parameter, so a value out of range is refused, never clamped.
 */
export function parseParams<S extends z.ZodType>(schema: S, input: unknown): z.output<S> {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const name = issue?.path[0] === undefined ? 'query' : String(issue.path[0]);
  throw new ApiError(400, 'bad_request', `invalid parameter ${name}: ${issue?.message ?? 'invalid value'}`);
}

/** Paths the API does not have. */
export const notFound: RequestHandler = (req) => {
  throw new ApiError(404, 'not_found', `no endpoint at ${req.path}`);
};

/** A known path asked with a method other than GET (HEAD is answered like GET). */
export const methodNotAllowed: RequestHandler = (req) => {
  throw new ApiError(405, 'method_not_allowed', `${req.method} is not allowed here; every endpoint is GET`, {
    Allow: 'GET, HEAD',
  });
};

/**
 * Maps every error to the error body. Anything that is not an ApiError is a bug or an outage:
 * it is logged with the request id and answered with a generic 500, never with its message or
 * stack, which may hold internals.
 */
export const errorHandler: ErrorRequestHandler = (err: unknown, req, res, next) => {
  if (res.headersSent) {
    next(err);
    return;
  }
  const apiError = toApiError(err);
  if (apiError.code === 'internal') requestLog(res).error({ err, method: req.method, path: req.path }, 'request failed');
  res.status(apiError.status).set(apiError.headers).json(apiError.body());
};

/** A path parameter that cannot be decoded (a bad %-escape), from Express's router or api/keyedRoutes.ts. */
export function malformedPath(): ApiError {
  return new ApiError(400, 'bad_request', 'malformed percent-encoding in the path');
}

function toApiError(err: unknown): ApiError {
  if (err instanceof ApiError) return err;
  // Express's router raises a URIError with status 400 for a path parameter it cannot decode.
  if (err instanceof URIError && 'status' in err && err.status === 400) return malformedPath();
  return new ApiError(500, 'internal', 'internal error; quote the x-request-id header when reporting it');
}
