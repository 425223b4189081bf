import { randomUUID } from 'node:crypto';
import type { RequestHandler, Response } from 'express';
import type { Logger } from '../infra/log.ts';

/** An incoming id is echoed only when it is short and cannot smuggle anything into logs or headers. */
const saneId = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * First middleware: gives every request an id (the caller's `x-request-id` when sane, else a new
 * UUID) and sends it back in `x-request-id`. The per-request logger that carries it is made only
 * when something logs (`requestLog`): most requests log nothing.
 */
export function requestId(log: Logger): RequestHandler {
  return (req, res, next) => {
    const incoming = req.headers['x-request-id'];
    const id = typeof incoming === 'string' && saneId.test(incoming) ? incoming : randomUUID();
    res.locals.requestId = id;
    res.locals.processLog = log;
    res.setHeader('x-request-id', id);
    next();
  };
}

/** The request's logger: the process logger's bindings plus the request id. */
export function requestLog(res: Response): Logger {
  return (res.locals.log ??= (res.locals.processLog as Logger).child({ requestId: res.locals.requestId }));
}
