import { readFileSync } from 'node:fs';
import cors from 'cors';
import express from 'express';
import type { Config } from '../infra/config.ts';
import type { Logger } from '../infra/log.ts';
import type { StoreCalls } from '../infra/store.ts';
import { requireKey } from './auth.ts';
import { ApiError, errorHandler, notFound } from './errors.ts';
import { keyedRoutes } from './keyedRoutes.ts';
import type { KeyStore } from './keys.ts';
import type { Quota } from './quota.ts';
import { requestId } from './requestId.ts';
import { openApiDocument } from './openapi.ts';
import { docsRouter } from './docs.ts';
import { cachedHandler } from './responseCache.ts';
import { coinImageHandler } from './coinImages.ts';
import { categoriesRoute } from './routes/categories.ts';
import { chainsRoute } from './routes/chains.ts';
import { chartRoute } from './routes/chart.ts';
import { coinRoute } from './routes/coin.ts';
import { coinsRoute } from './routes/coins.ts';
import { exchangeRoute } from './routes/exchange.ts';
import { exchangesRoute } from './routes/exchanges.ts';
import { fearGreedRoute } from './routes/fearGreed.ts';
import { globalRoute } from './routes/global.ts';
import { marketStatusRoute } from './routes/marketStatus.ts';
import { etfAssetFlowsRoute, etfFlowsRoute } from './routes/etfFlows.ts';
import { liquidationsRoute } from './routes/liquidations.ts';
import { marketsRoute } from './routes/markets.ts';
import { newCoinsRoute } from './routes/newCoins.ts';
import { ohlcRoute } from './routes/ohlc.ts';
import { searchRoute } from './routes/search.ts';
import { pricesRoute } from './routes/prices.ts';
import type { ProcessStatusSources } from './status/processStatus.ts';
import { statusPage } from './status/statusPage.ts';
import { staticAsset } from './staticAsset.ts';
import { isOperatorPath } from '../infra/operatorAccess.ts';

export interface AppDeps {
  store: StoreCalls;
  keys: KeyStore;
  quota: Quota;
  config: Pick<Config, 'INDEX_STALE_AFTER_MS' | 'STORE_MIN_FREE_MB' | 'MDS_SIMULATED' | 'STATUS_ASSETS' | 'PUBLIC_BASE_URL' | 'OPS_ALLOWED_HOSTS'>;
  log: Logger;
  /** Operator endpoints (/health, /ready, /metrics), the request metrics and what the status page reads of this process, wired by the composition root. */
  ops?: { observe: express.RequestHandler; router: express.Router; status?: ProcessStatusSources };
  /** POST /v1/stream/token (api/stream/streamServer.ts); unset = no such route. */
  streamToken?: express.RequestHandler;
}

const exposedHeaders = ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset', 'x-request-id', 'retry-after', 'etag', 'age', 'x-data-stale'] as const;
const asyncApi = readFileSync(new URL('./asyncapi.json', import.meta.url));

/** The /v1 HTTP API, without a listening socket (server.ts listens; tests may too). */
export function createApp(deps: AppDeps): express.Application {
  const app = express();
  app.disable('x-powered-by');
  // Cached routes set their own precomputed ETag; nothing else needs one hashed per response.
  app.set('etag', false);

  const routes = [pricesRoute(deps), ohlcRoute(deps), marketsRoute(deps), exchangesRoute(deps), exchangeRoute(deps), searchRoute(deps), liquidationsRoute(deps), newCoinsRoute(deps), etfFlowsRoute(deps), etfAssetFlowsRoute(deps), chainsRoute(deps), marketStatusRoute(deps), fearGreedRoute(deps), coinsRoute(deps), coinRoute(deps), chartRoute(deps), globalRoute(deps), categoriesRoute(deps)];
  const openApi = Buffer.from(JSON.stringify(openApiDocument(routes, { publicBaseUrl: deps.config.PUBLIC_BASE_URL })));

  if (deps.ops) app.use(deps.ops.observe);
  app.use(requestId(deps.log));
  // Browsers may call the API from any origin, and read the quota and request-id headers.
  // POST: only /v1/stream/token.
  const preflight = cors({ methods: ['GET', 'HEAD', 'POST'], exposedHeaders: [...exposedHeaders] });
  const exposed = exposedHeaders.join(',');
  app.use((req, res, next) => {
    // The operator endpoints are not for web pages: no CORS there (infra/operatorAccess.ts).
    if (isOperatorPath(req.path)) return next();
    if (req.method === 'OPTIONS') return preflight(req, res, next);
    // What the cors middleware sends for any origin, set directly: this runs on every request.
    res.setHeader('Access-Control-Allow-Origin', '*');
    res.setHeader('Access-Control-Expose-Headers', exposed);
    next();
  });
  // The endpoints first: most requests are theirs, and their paths are found in one step (keyedRoutes.ts). Each needs a key.
  const guards = [requireKey(deps.keys), deps.quota.middleware];
  app.use(keyedRoutes(guards, routes.map((route) => ({ path: route.path, get: cachedHandler(route) }))));
  // Cached routes keep compressed bodies in their cache (responseCache.ts); the documents and pages without a key are compressed once (staticAsset.ts).
  // The reference is public; everything under it needs a key.
  app.get('/v1/openapi.json', staticAsset(openApi, 'json', 'no-cache'));
  app.use(docsRouter());
  app.get('/v1/asyncapi.json', staticAsset(asyncApi, 'json', 'no-cache'));
  // The stream is a WebSocket (server.ts hands its upgrades to api/stream): a plain GET is a mistake.
  app.get('/v1/stream', () => {
    throw new ApiError(426, 'bad_request', 'GET /v1/stream is a WebSocket endpoint: connect with a WebSocket client (api/asyncapi.json)', { Upgrade: 'websocket' });
  });
  // Coin logos are public pictures, like the reference.
  app.get('/assets/coins/:id.svg', coinImageHandler());
  // The status page and its data: no key; what it shows of the keyed data is STATUS_ASSETS (README "Status page").
  app.use(statusPage({ store: deps.store, config: deps.config, process: deps.ops?.status }));
  if (deps.ops) app.use(deps.ops.router);
  // Everything else needs a key.
  app.use(guards);
  if (deps.streamToken) app.post('/v1/stream/token', deps.streamToken);

  app.use(notFound);
  app.use(errorHandler);
  return app;
}
