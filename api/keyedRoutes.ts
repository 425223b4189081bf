import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { malformedPath, methodNotAllowed } from './errors.ts';

/** A keyed endpoint: its path template (`/v1/coins/:id/ohlc`) and what answers a GET of it. */
export interface KeyedRoute {
  path: string;
  get: RequestHandler;
}

interface Template {
  path: string;
  /** Each segment after the leading slash: a literal (lower case) or a parameter's name. */
  segments: { literal?: string; param?: string }[];
  /** The guards, then the answer (GET and HEAD) or 405 (any other method). */
  get: RequestHandler[];
  other: RequestHandler[];
}

/**
 * The keyed endpoints as one Express layer: a request whose path is one of theirs runs `guards`
 * (the key check, the quota), then the endpoint's answer; any other request goes on to the next
 * layer. Express would test each route's pattern in turn and wrap each handler in its own
 * dispatch, which was about a sixth of the API's time at 64 connections (test/bench/RESULTS.md).
 * Matches as Express's router does: literals ignore case, one trailing slash is allowed, a
 * parameter is one whole segment, %-decoded (a bad escape is 400). A method other than GET or HEAD
 * on a known path is 405. The route's template is in `res.locals.route`, for the metrics.
 */
export function keyedRoutes(guards: readonly RequestHandler[], routes: readonly KeyedRoute[]): RequestHandler {
  const exact = new Map<string, Template>();
  const withParams: Template[] = [];
  for (const route of routes) {
    const segments = route.path
      .slice(1)
      .split('/')
      .map((segment) => (segment.startsWith(':') ? { param: segment.slice(1) } : { literal: segment.toLowerCase() }));
    const template = { path: route.path, segments, get: [...guards, route.get], other: [...guards, methodNotAllowed] };
    if (segments.every((segment) => segment.literal !== undefined)) exact.set(route.path.toLowerCase(), template);
    else withParams.push(template);
  }

  return (req, res, next) => {
    const path = withoutTrailingSlash(req.path);
    let template = exact.get(path.toLowerCase());
    let params: Record<string, string> = {};
    if (!template) {
      const segments = path.slice(1).split('/');
      template = withParams.find((candidate) => fits(candidate, segments));
      if (template) params = paramsOf(template, segments);
    }
    if (!template) return next();
    res.locals.route = template.path;
    req.params = params;
    runInOrder(req.method === 'GET' || req.method === 'HEAD' ? template.get : template.other, req, res, next);
  };
}

function withoutTrailingSlash(path: string): string {
  return path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
}

function fits(template: Template, segments: readonly string[]): boolean {
  return (
    segments.length === template.segments.length &&
    template.segments.every((segment, i) => (segment.literal === undefined ? segments[i] !== '' : segments[i]!.toLowerCase() === segment.literal))
  );
}

/** The parameters of a path that fits the template, decoded only then (Express answers a bad escape on a path it does not have 404). */
function paramsOf(template: Template, segments: readonly string[]): Record<string, string> {
  const params: Record<string, string> = {};
  for (const [i, segment] of template.segments.entries()) if (segment.param !== undefined) params[segment.param] = decodedSegment(segments[i]!);
  return params;
}

function decodedSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw malformedPath();
  }
}

/**
 * Runs each handler when the one before calls its `next()`; an error, thrown or rejected, goes to
 * `done` (Express's error handlers), as it would from an Express route.
 */
function runInOrder(handlers: readonly RequestHandler[], req: Request, res: Response, done: NextFunction): void {
  let at = 0;
  const step = (err?: unknown): void => {
    if (err !== undefined && err !== null) return done(err);
    const handler = handlers[at++];
    if (!handler) return done();
    try {
      const result: unknown = handler(req, res, step);
      if (result instanceof Promise) result.catch((rejected: unknown) => done(rejected ?? new Error('a handler rejected without a reason')));
    } catch (thrown) {
      done(thrown);
    }
  };
  step();
}
