import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import express from 'express';
import { staticAsset } from './staticAsset.ts';

const docsPage = readFileSync(new URL('./docs.html', import.meta.url));
// Scalar's one-file browser build (not among the package's exports, so found from its entry point).
const scalarBundle = join(dirname(createRequire(import.meta.url).resolve('@scalar/api-reference')), 'browser', 'standalone.js');

/** The API reference at /docs (no key): Scalar's page over /v1/openapi.json, its script served from here. */
export function docsRouter(): express.Router {
  const router = express.Router();
  router.get('/docs', staticAsset(docsPage, 'html', 'no-cache'));
  // Read on its first request: most API processes never serve it.
  router.get('/docs/assets/scalar.js', staticAsset(() => readFileSync(scalarBundle), 'js', 'public, max-age=86400'));
  return router;
}
