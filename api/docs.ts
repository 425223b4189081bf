import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import compression from 'compression';
import express from 'express';

const docsPage = readFileSync(new URL('./docs.html', import.meta.url));
// Scalar's one-file browser build (not among the package's exports, so found from its entry point).
const scalarBundle = join(dirname(createRequire(import.meta.url).resolve('@scalar/api-reference')), 'browser', 'standalone.js');

/** The API reference at /docs (no key): Scalar's page over /v1/openapi.json, its script served from here. */
export function docsRouter(): express.Router {
  const router = express.Router();
  const compress = compression();
  router.get('/docs', compress, (_req, res) => void res.type('html').send(docsPage));
  router.get('/docs/assets/scalar.js', compress, (_req, res) => res.sendFile(scalarBundle, { maxAge: '1d' }));
  return router;
}
