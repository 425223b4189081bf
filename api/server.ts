import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import type { Config } from '../infra/config.ts';
import type { Logger } from '../infra/log.ts';
import type { Store } from '../infra/store.ts';
import { createApp, type AppDeps } from './app.ts';
import { KeyStore } from './keys.ts';
import { createQuota } from './quota.ts';

export interface ApiServer {
  /** http://127.0.0.1:<port> */
  url: string;
  port: number;
  /** Stops accepting requests, waits for those in flight, and releases the quota store. The store stays open. */
  close(): Promise<void>;
}

export interface StartApiOptions {
  /** A migrated store; the caller owns it and closes it. */
  store: Store;
  config: Pick<Config, 'PORT' | 'QUOTA_PER_HOUR' | 'REDIS_URL' | 'INDEX_STALE_AFTER_MS' | 'MDS_SIMULATED'>;
  log: Logger;
  /** Namespace of the quota counters in Redis (default mds:quota). */
  quotaKeyPrefix?: string;
  /** Operator endpoints and request metrics (see AppDeps). */
  ops?: AppDeps['ops'];
}

/** Runs the API on config.PORT (0 = any free port). */
export async function startApi(options: StartApiOptions): Promise<ApiServer> {
  const { store, config, log } = options;
  const keys = new KeyStore(store);
  const quota = createQuota({
    perHour: config.QUOTA_PER_HOUR,
    redisUrl: config.REDIS_URL,
    keyPrefix: options.quotaKeyPrefix,
    log,
  });
  const app = createApp({ store, keys, quota, config, log, ops: options.ops });
  const server = app.listen(config.PORT);
  try {
    await once(server, 'listening');
  } catch (err) {
    await quota.close();
    throw err;
  }
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    async close() {
      await new Promise<void>((resolve, reject) => server.close((err) => (err ? reject(err) : resolve())));
      await quota.close();
    },
  };
}
