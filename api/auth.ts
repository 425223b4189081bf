import type { IncomingMessage } from 'node:http';
import type { RequestHandler, Response } from 'express';
import { ApiError } from './errors.ts';
import { KeysUnavailableError, type KeyStore, type VerifiedKey } from './keys.ts';

const challenge = { 'WWW-Authenticate': 'Bearer realm="mds"' };

/** The key a request presents: `x-api-key`, or `Authorization: Bearer <key>` (spec section 5). */
export function presentedKey(req: Pick<IncomingMessage, 'headers'>): string | undefined {
  const header = req.headers['x-api-key'];
  if (typeof header === 'string' && header.trim()) return header.trim();
  const bearer = /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '');
  return bearer?.[1];
}

/**
 * The owner of a presented key, checked in memory (KeyStore), so this never waits: 401
 * missing_key without one, 401 invalid_key for an unknown or revoked one, 503 unavailable only
 * while the keys cannot be told (not loaded yet, or the store has failed for longer than the
 * KeyStore allows).
 */
export function authenticate(keys: KeyStore, key: string | undefined): VerifiedKey {
  if (key === undefined) {
    throw new ApiError(401, 'missing_key', 'send an API key in the x-api-key header or as Authorization: Bearer <key>', challenge);
  }
  let verified: VerifiedKey | undefined;
  try {
    verified = keys.verify(key);
  } catch (err) {
    throw keysUnavailable(err);
  }
  if (!verified) throw new ApiError(401, 'invalid_key', 'the API key is unknown or has been revoked', challenge);
  return verified;
}

/** KeysUnavailableError as the client sees it (503); anything else is rethrown as it is. */
export function keysUnavailable(err: unknown): unknown {
  if (!(err instanceof KeysUnavailableError)) return err;
  return new ApiError(503, 'unavailable', 'cannot check API keys right now; retry in a few seconds', { 'Retry-After': '5' });
}

/** Every endpoint needs a valid key (authenticate). */
export function requireKey(keys: KeyStore): RequestHandler {
  return (req, res, next) => {
    res.locals.apiKey = authenticate(keys, presentedKey(req));
    next();
  };
}

/** The key that `requireKey` accepted for this request. */
export function apiKeyOf(res: Response): VerifiedKey {
  return res.locals.apiKey as VerifiedKey;
}
