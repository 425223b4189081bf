import { request } from 'node:http';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { catalogAssets } from '../../infra/catalog/catalog.ts';
import { coinImageHandler, coinSvg } from '../coinImages.ts';
import { errorHandler, type ErrorBody } from '../errors.ts';
import { listenOnLoopback, type LoopbackServer } from '../../test/support/apiHarness.ts';

/** FNV-1a over the id's UTF-16 code units, with BigInt arithmetic mod 2^32 (the module uses Math.imul). */
function expectedHue(id: string): number {
  let hash = 2166136261n;
  for (const unit of id.split('').map((c) => BigInt(c.charCodeAt(0)))) hash = ((hash ^ unit) * 16777619n) % 2n ** 32n;
  return Number(hash % 360n);
}

describe('GET /assets/coins/:id.svg', () => {
  let server: LoopbackServer;
  let base = '';

  beforeAll(async () => {
    // The handler as app.ts mounts it (before the key check), with the API's error handler.
    const app = express();
    app.set('etag', false);
    app.get('/assets/coins/:id.svg', coinImageHandler());
    app.use(errorHandler);
    server = await listenOnLoopback(app);
    base = server.url;
  });
  afterAll(() => server?.close());

  it('serves a cacheable SVG for every image URL of the catalog', async () => {
    for (const asset of catalogAssets) {
      for (const [size, px] of [['thumb', 32], ['small', 64], ['large', 256]] as const) {
        const res = await fetch(base + asset.image[size]);
        expect(res.status, asset.image[size]).toBe(200);
        expect(res.headers.get('content-type')).toMatch(/^image\/svg\+xml/);
        expect(res.headers.get('cache-control')).toMatch(/max-age=86400/);
        const svg = await res.text();
        expect(svg).toContain(`width="${px}" height="${px}"`);
        expect(svg).toContain(`fill="hsl(${expectedHue(asset.id)},58%,40%)"`);
      }
    }
  });

  it('draws the upper-case ticker, shortened past 8 characters, with text escaped', async () => {
    const svg = await (await fetch(`${base}/assets/coins/bitcoin.svg`)).text();
    expect(svg).toMatch(/^<svg xmlns="http:\/\/www.w3.org\/2000\/svg" width="256" height="256"/);
    expect(svg).toMatch(/>BTC<\/text>/);
    expect(svg).toContain('<title>Bitcoin</title>');
    expect(coinSvg({ id: 'x', symbol: 'abcdefghij', name: 'X' }, 'large')).toMatch(/>ABCDEFG…<\/text>/);
    const hostile = coinSvg({ id: 'x', symbol: '<b>&"', name: '</title><script>' }, 'small');
    expect(hostile).toContain('&lt;B&gt;&amp;&quot;');
    expect(hostile).toContain('<title>&lt;/title&gt;&lt;script&gt;</title>');
    expect(hostile).not.toContain('<script>');
  });

  it('answers 304 to a matching If-None-Match', async () => {
    const first = await fetch(`${base}/assets/coins/ethereum.svg?size=small`);
    const etag = first.headers.get('etag');
    expect(etag).toMatch(/^".+"$/);
    // node:http rather than fetch: fetch adds `cache-control: no-cache` to conditional requests, which rightly defeats them.
    const status = await new Promise<number | undefined>((resolve, reject) => {
      request(`${base}/assets/coins/ethereum.svg?size=small`, { headers: { 'if-none-match': etag! } }, (res) => {
        res.resume();
        resolve(res.statusCode);
      }).on('error', reject).end();
    });
    expect(status).toBe(304);
  });

  it('404 for an id not in the catalog, 400 naming size for an unknown size', async () => {
    const missing = await fetch(`${base}/assets/coins/no-such-coin.svg`);
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as ErrorBody).error.code).toBe('not_found');
    const badSize = await fetch(`${base}/assets/coins/bitcoin.svg?size=huge`);
    expect(badSize.status).toBe(400);
    const body = (await badSize.json()) as ErrorBody;
    expect(body.error.code).toBe('bad_request');
    expect(body.error.message).toMatch(/size.*thumb.*small.*large/);
  });
});
