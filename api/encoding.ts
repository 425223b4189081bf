import { createHash } from 'node:crypto';
import { promisify } from 'node:util';
import { brotliCompress, constants as zlibConstants, gzip } from 'node:zlib';
import type { Request } from 'express';

/**
 * Content coding of the bodies we serve from memory (the response cache, the static files): how a
 * body is compressed, which coding a request gets, and the body's validator. One definition for both.
 */
export type Encoding = 'br' | 'gzip';

export const compressors: Record<Encoding, (body: Buffer) => Promise<Buffer>> = {
  // Quality 5: most of brotli's gain at a fraction of the default's (11) time; made once per body.
  br: (body) => promisify(brotliCompress)(body, { params: { [zlibConstants.BROTLI_PARAM_QUALITY]: 5 } }),
  gzip: (body) => promisify(gzip)(body),
};

/** The q-value Accept-Encoding gives each coding it names (RFC 9110 section 12.5.3), lower-cased; a bad q-value is 0. */
function acceptedCodings(header: string): Map<string, number> {
  const qualities = new Map<string, number>();
  for (const element of header.split(',')) {
    const [coding, ...params] = element.split(';').map((part) => part.trim().toLowerCase());
    if (!coding) continue;
    const q = params.find((param) => param.startsWith('q='));
    qualities.set(coding, q === undefined ? 1 : Number(q.slice(2)) || 0);
  }
  return qualities;
}

/**
 * The coding the client rates highest, brotli when it rates brotli and gzip alike; none when it
 * names none or rates identity higher. Express's `acceptsEncodings` breaks ties by the client's
 * order, and browsers send `gzip, deflate, br`.
 */
export function preferredEncoding(req: Pick<Request, 'headers'>): Encoding | undefined {
  const header = req.headers['accept-encoding'];
  if (header === undefined) return undefined;
  const stated = acceptedCodings(header);
  // A coding the client does not name is rated as `*`; identity, unnamed, is acceptable but never preferred.
  const quality = (coding: string) => stated.get(coding) ?? stated.get('*') ?? 0;
  const best: Encoding = quality('br') >= quality('gzip') ? 'br' : 'gzip';
  return quality(best) > 0 && quality(best) >= quality('identity') ? best : undefined;
}

/** Bodies up to this size are sent as they are: compressing them saves less than it costs. */
export const compressAbove = 1024;

/** The encoding to send a body of `size` bytes in: the client's preferred one, none for small bodies. */
export function negotiatedEncoding(req: Pick<Request, 'headers'>, size: number): Encoding | undefined {
  return size <= compressAbove ? undefined : preferredEncoding(req);
}

/** A strong validator of the body's bytes. */
export const etagOf = (body: Buffer) => `"${createHash('sha1').update(body).digest('base64url')}"`;
