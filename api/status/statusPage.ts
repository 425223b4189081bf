import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import express from 'express';
import { methodNotAllowed } from '../errors.ts';
import { cachedHandler } from '../responseCache.ts';
import { staticAsset } from '../staticAsset.ts';
import { operatorHostsOf, operatorOnly } from '../../infra/operatorAccess.ts';
import { statusRoutes, type StatusDeps } from './statusData.ts';

const page = readFileSync(new URL('./status.html', import.meta.url));
const script = readFileSync(new URL('./status.js', import.meta.url));
// The charting library's standalone build, served from our own origin: the page works offline and
// no third party sees who looks at it.
// (The package exports only its ES module, so the bundle is found beside its package.json.)
const chartsLibrary = readFileSync(join(dirname(createRequire(import.meta.url).resolve('lightweight-charts/package.json')), 'dist/lightweight-charts.standalone.production.js'));

// The page and its script change only with a release: browsers revalidate them rather than guess.
const revalidate = 'no-cache';

/**
 * The status page at `/`, without a key: a static page whose script polls `/status.json` (and
 * `/status/candles.json`), both cached server-side (statusData.ts), so the page cannot be used to
 * load the store whoever opens it.
 */
export function statusPage(deps: StatusDeps): express.Router {
  const router = express.Router();
  router.get('/', staticAsset(page, 'html', revalidate));
  router.get('/status/status.js', staticAsset(script, 'js', revalidate));
  router.get('/status/lightweight-charts.js', staticAsset(chartsLibrary, 'js', 'public, max-age=86400'));
  // Operator data: not for other sites' pages (infra/operatorAccess.ts).
  const operatorOnlyHere = operatorOnly(operatorHostsOf(deps.config));
  for (const route of statusRoutes(deps)) router.route(route.path).get(operatorOnlyHere, cachedHandler(route)).all(methodNotAllowed);
  return router;
}
