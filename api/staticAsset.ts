import type { RequestHandler } from 'express';
import { compressors, etagOf, preferredEncoding, type Encoding } from './encoding.ts';

/**
 * A file served without a key (the reference's script is 4.35 MB): each encoding made once, on its
 * first request and off the event loop, by the response cache's compressors (encoding.ts), never
 * again per request, with an ETag so that a browser's revalidation costs a 304. Compression per
 * request let anyone spend the API's CPU (issue #29, finding 5).
 */
export function staticAsset(body: Buffer | (() => Buffer), type: string, cacheControl: string): RequestHandler {
  let raw: { bytes: Buffer; etag: string } | undefined;
  const encoded = new Map<Encoding, Promise<Buffer>>();
  return async (req, res) => {
    if (!raw) {
      const bytes = typeof body === 'function' ? body() : body;
      raw = { bytes, etag: etagOf(bytes) };
    }
    res.setHeader('Cache-Control', cacheControl);
    res.setHeader('ETag', raw.etag);
    res.setHeader('Vary', 'Accept-Encoding');
    res.type(type);
    if (req.fresh) {
      res.status(304).end();
      return;
    }
    const encoding = preferredEncoding(req);
    let bytes = raw.bytes;
    if (encoding) {
      let made = encoded.get(encoding);
      if (!made) encoded.set(encoding, (made = compressors[encoding](raw.bytes)));
      bytes = await made;
      res.setHeader('Content-Encoding', encoding);
    }
    res.setHeader('Content-Length', bytes.length);
    res.end(req.method === 'HEAD' ? undefined : bytes);
  };
}
