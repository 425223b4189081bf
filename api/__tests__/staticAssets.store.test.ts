// The files served without a key are compressed once, not per request (issue #29, finding 5: the
// 4.35 MB reference script was gzipped again for every anonymous request), with an ETag.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { expect, test } from 'vitest';
import { rawGet, useTestApi } from '../../test/support/apiHarness.ts';

const api = useTestApi({});
const scalar = readFileSync(join(dirname(createRequire(import.meta.url).resolve('@scalar/api-reference')), 'browser', 'standalone.js'));

const raw = (path: string, headers: Record<string, string>) => rawGet(api.url + path, headers);

test('the reference script: brotli, gzip or plain, each with its length, the same bytes every time, and 304 on its ETag', async () => {
  const br = await raw('/docs/assets/scalar.js', { 'accept-encoding': 'gzip, br' });
  expect(br.status).toBe(200);
  expect(br.headers['content-encoding']).toBe('br');
  // A length up front: the body was made before the answer, not streamed through a compressor.
  expect(Number(br.headers['content-length'])).toBe(br.body.length);
  expect(brotliDecompressSync(br.body).equals(scalar)).toBe(true);
  expect(br.body.length).toBeLessThan(scalar.length / 3);
  const again = await raw('/docs/assets/scalar.js', { 'accept-encoding': 'br' });
  expect(again.body.equals(br.body)).toBe(true);

  const gzip = await raw('/docs/assets/scalar.js', { 'accept-encoding': 'gzip' });
  expect(gzip.headers['content-encoding']).toBe('gzip');
  expect(gunzipSync(gzip.body).equals(scalar)).toBe(true);
  const plain = await raw('/docs/assets/scalar.js', {});
  expect(plain.headers['content-encoding']).toBeUndefined();
  expect(plain.body.equals(scalar)).toBe(true);
  for (const r of [br, gzip, plain]) {
    expect(r.headers.vary).toBe('Accept-Encoding');
    expect(r.headers.etag).toBe(br.headers.etag);
  }

  const revalidated = await raw('/docs/assets/scalar.js', { 'accept-encoding': 'br', 'if-none-match': String(br.headers.etag) });
  expect(revalidated.status).toBe(304);
  expect(revalidated.body.length).toBe(0);
});

test('the pages and documents without a key are served the same way', async () => {
  for (const path of ['/docs', '/', '/status/status.js', '/status/lightweight-charts.js', '/v1/openapi.json', '/v1/asyncapi.json']) {
    const res = await raw(path, { 'accept-encoding': 'gzip' });
    expect(res.status, path).toBe(200);
    expect(res.headers['content-encoding'], path).toBe('gzip');
    expect(Number(res.headers['content-length']), path).toBe(res.body.length);
    expect(res.headers.etag, path).toMatch(/^"[\w-]{27}"$/);
    expect(gunzipSync(res.body).length, path).toBeGreaterThan(res.body.length);
  }
});
