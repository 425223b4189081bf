import type { Request, RequestHandler, Response } from 'express';
import { ApiError } from './errors.ts';
import { KeysUnavailableError, type KeyStore, type VerifiedKey } from './keys.ts';

const challenge = { 'WWW-Authenticate': 'Bearer realm="mds"' };

/** The key a request presents: `x-api-key`, or `Authorization: Bearer <key>` (spec section 5). */
export function presentedKey(req: Request): string | undefined {
  const header = req.get('x-api-key')?.trim();
  if (header) return header;
  const bearer = /^Bearer\s+(\S+)\s*$/i.exec(req.get('authorization') ?? '');
  return bearer?.[1];
}

/**
 * Every endpoint needs a valid key: 401 missing_key without one, 401 invalid_key for an unknown or
 * revoked one. Checked in memory (KeyStore), so this never waits: 503 unavailable only while the
 * keys cannot be told (not loaded yet, or the store has failed for longer than the KeyStore allows).
 */
export function requireKey(keys: KeyStore): RequestHandler {
  return (req, res, next) => {
    const key = presentedKey(req);
    if (key === undefined) {
      throw new ApiError(401, 'missing_key', 'send an API key in the x-api-key header or as Authorization: Bearer <key>', challenge);
    }
    let verified: VerifiedKey | undefined;
    try {
      verified = keys.verify(key);
    } catch (err) {
      if (!(err instanceof KeysUnavailableError)) throw err;
      throw new ApiError(503, 'unavailable', 'cannot check API keys right now; retry in a few seconds', { 'Retry-After': '5' });
    }
    if (!verified) throw new ApiError(401, 'invalid_key', 'the API key is unknown or has been revoked', challenge);
    res.locals.apiKey = verified;
    next();
  };
}

/** The key that `requireKey` accepted for this request. */
export function apiKeyOf(res: Response): VerifiedKey {
  return res.locals.apiKey as VerifiedKey;
}
