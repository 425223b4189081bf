import { createHash } from 'node:crypto';
import type { RequestHandler } from 'express';
import { z } from 'zod';
import { findAsset, type CatalogAsset } from '../infra/catalog/catalog.ts';
import { describeAsset } from '../infra/catalog/discovered.ts';
import { ApiError, parseParams } from './errors.ts';

/**
 * Coin logos the service draws itself (GET /assets/coins/:id.svg): a disc in a colour derived from
 * the id with the ticker in the middle. The bundled catalog's `image` URLs point here, so logos
 * work offline and no third party sees our users' requests. No API key: they are public pictures.
 */

/** Rendered edge length in pixels per size hint (the drawing itself is a 64-unit viewBox). */
export const coinImageSizes = { thumb: 32, small: 64, large: 256 } as const;
const imageQuery = z.object({
  size: z.enum(Object.keys(coinImageSizes) as [keyof typeof coinImageSizes]).default('large'),
});

// A day's freshness is plenty for a picture that only changes with the catalog, and lets clients
// revalidate with the ETag after a catalog update.
const cacheControl = 'public, max-age=86400, stale-while-revalidate=604800';
const longestTicker = 8;

/** Hue 0-359 from the id (FNV-1a), so each asset keeps its colour across restarts and replicas. */
export function coinHue(id: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < id.length; i++) {
    hash ^= id.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash % 360;
}

const xmlEscapes: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' };

/** The SVG for one asset and size: a coloured disc and the upper-case ticker, shrunk to fit. */
export function coinSvg(asset: Pick<CatalogAsset, 'id' | 'symbol' | 'name'>, size: keyof typeof coinImageSizes): string {
  const chars = [...asset.symbol.toUpperCase()];
  const ticker = (chars.length > longestTicker ? chars.slice(0, longestTicker - 1).join('') + '…' : chars.join('')).replace(/[&<>"']/g, (c) => xmlEscapes[c]!);
  const title = asset.name.replace(/[&<>"']/g, (c) => xmlEscapes[c]!);
  // A sans-serif glyph is about 0.62 em wide: keep the text inside ~50 of the 64 units.
  const fontSize = Math.min(22, Math.floor(50 / (0.62 * Math.max(chars.length > longestTicker ? longestTicker : chars.length, 1))));
  const px = coinImageSizes[size];
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" width="${px}" height="${px}" viewBox="0 0 64 64" role="img">` +
    `<title>${title}</title>` +
    `<circle cx="32" cy="32" r="31" fill="hsl(${coinHue(asset.id)},58%,40%)"/>` +
    `<text x="32" y="32" dy="0.35em" text-anchor="middle" font-family="Helvetica,Arial,sans-serif" font-weight="700" font-size="${fontSize}" fill="#fff">${ticker}</text>` +
    `</svg>`
  );
}

/**
 * Express handler for GET /assets/coins/:id.svg?size=thumb|small|large: catalog assets and
 * discovered ones (any id of that form: drawing it is cheap, and nothing is kept for it); 404 otherwise.
 */
export function coinImageHandler(): RequestHandler {
  // One entry per catalog asset and size at most: bounded by the catalog, whatever ids clients send.
  const rendered = new Map<string, { body: Buffer; etag: string }>();
  const draw = (asset: CatalogAsset, size: keyof typeof coinImageSizes) => {
    const body = Buffer.from(coinSvg(asset, size));
    return { body, etag: `"${createHash('sha1').update(body).digest('base64url')}"` };
  };
  return (req, res) => {
    const id = String(req.params.id);
    const { size } = parseParams(imageQuery, req.query);
    const asset = describeAsset(id);
    if (!asset) throw new ApiError(404, 'not_found', `no asset with id ${JSON.stringify(id)}`);
    const key = `${id}\n${size}`;
    let image = rendered.get(key);
    if (!image) {
      image = draw(asset, size);
      if (findAsset(id)) rendered.set(key, image);
    }
    res.set({
      'Content-Type': 'image/svg+xml',
      'Cache-Control': cacheControl,
      ETag: image.etag,
      // An SVG opened directly is a document: it may run nothing and load nothing.
      'Content-Security-Policy': "default-src 'none'; style-src 'unsafe-inline'",
      'X-Content-Type-Options': 'nosniff',
    });
    if (req.fresh) {
      res.status(304).end();
      return;
    }
    res.send(image.body);
  };
}

/**
 * A URL a response carries: a path on the API's own origin (the bundled catalog's logos) made
 * absolute under PUBLIC_BASE_URL when it is set; an absolute URL (an operator's catalog may name
 * one) as it is. The base comes from configuration, never from a request's Host header: responses
 * are cached and shared by every client.
 */
export function publicUrl(baseUrl: string | undefined, url: string): string {
  return baseUrl !== undefined && url.startsWith('/') ? baseUrl + url : url;
}
