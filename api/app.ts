import express from 'express';
import type { Config } from '../infra/config.ts';
import type { Logger } from '../infra/log.ts';
import type { Store } from '../infra/store.ts';
import { requireKey } from './auth.ts';
import { errorHandler, methodNotAllowed, notFound } from './errors.ts';
import type { KeyStore } from './keys.ts';
import type { Quota } from './quota.ts';
import { requestId } from './requestId.ts';
import { cachedHandler } from './responseCache.ts';
import { ohlcRoute } from './routes/ohlc.ts';
import { pricesRoute } from './routes/prices.ts';

export interface AppDeps {
  store: Store;
  keys: KeyStore;
  quota: Quota;
  config: Pick<Config, 'INDEX_STALE_AFTER_MS' | 'MDS_SIMULATED'>;
  log: Logger;
}

/** The /v1 HTTP API, without a listening socket (server.ts listens; tests may too). */
export function createApp(deps: AppDeps): express.Application {
  const app = express();
  app.disable('x-powered-by');
  // Cached routes set their own precomputed ETag; nothing else needs one hashed per response.
  app.set('etag', false);

  app.use(requestId(deps.log));
  app.use(requireKey(deps.keys));
  app.use(deps.quota.middleware);

  for (const route of [pricesRoute(deps), ohlcRoute(deps)]) {
    app.route(route.path).get(cachedHandler(route)).all(methodNotAllowed);
  }

  app.use(notFound);
  app.use(errorHandler);
  return app;
}
