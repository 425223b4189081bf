import { timingSafeEqual } from 'node:crypto';
import type { KeyStore, VerifiedKey } from '../keys.ts';

/** How long a stream token opens connections; a connection it opened stays open after. */
export const streamTokenTtlMs = 60_000;

/**
 * Short-lived tokens for browsers, which cannot set headers on a WebSocket: made with a key
 * (POST /v1/stream/token), passed as `?token=` to GET /v1/stream. A token is the key's prefix and
 * hash and an expiry, signed with HMAC-SHA256 under a key derived from the server secret
 * (KeyStore.sign); nothing is held per token, so any replica with the same API_KEY_SECRET accepts
 * it. A token of a key revoked since is refused.
 */
export class StreamTokens {
  readonly #keys: KeyStore;

  constructor(keys: KeyStore) {
    this.#keys = keys;
  }

  issue(key: VerifiedKey, now = Date.now()): { token: string; expiresAt: number } {
    const expiresAt = now + streamTokenTtlMs;
    const payload = Buffer.from(JSON.stringify({ p: key.prefix, h: key.keyHash, e: expiresAt })).toString('base64url');
    return { token: `${payload}.${this.#sign(payload)}`, expiresAt };
  }

  /**
   * The key a token stands for, when its signature holds, it has not expired and the key is still
   * valid. Throws KeysUnavailableError as KeyStore.isValid does.
   */
  verify(token: string, now = Date.now()): VerifiedKey | undefined {
    const [payload, signature, ...rest] = token.split('.');
    if (!payload || !signature || rest.length > 0) return undefined;
    const expected = Buffer.from(this.#sign(payload));
    const given = Buffer.from(signature);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
    const { p, h, e } = JSON.parse(Buffer.from(payload, 'base64url').toString()) as { p: string; h: string; e: number };
    if (now > e) return undefined;
    const key = { prefix: p, keyHash: h };
    return this.#keys.isValid(key) ? key : undefined;
  }

  #sign(payload: string): string {
    return this.#keys.sign('stream-token', payload);
  }
}
