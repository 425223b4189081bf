import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import type { Config } from '../infra/config.ts';
import type { Logger } from '../infra/log.ts';
import type { Store } from '../infra/store.ts';
import { createApp, type AppDeps } from './app.ts';
import { KeyStore, type KeyStoreOptions } from './keys.ts';
import { createQuota } from './quota.ts';

export interface ApiServer {
  /** http://127.0.0.1:<port> */
  url: string;
  port: number;
  /**
   * Stops accepting requests, waits for those in flight at most `shutdownTimeoutMs`, then closes
   * every connection; stops the key reloads and releases the quota store. The store stays open.
   */
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
  /** Longest wait (ms) of close() for requests in flight before it cuts their connections (default 5000). */
  shutdownTimeoutMs?: number;
  /** Reload interval and staleness bound of the in-memory API keys (KeyStore defaults: 5 s, 10 min). */
  keyStore?: KeyStoreOptions;
}

/** Runs the API on config.PORT (0 = any free port). */
export async function startApi(options: StartApiOptions): Promise<ApiServer> {
  const { store, config, log } = options;
  const keys = new KeyStore(store, options.keyStore);
  // Bounded by the store's query deadline. A store that is down at start does not stop the API:
  // it answers 503 until a background reload of the keys succeeds.
  if (!(await keys.start(log))) log.warn('API keys not loaded at start; requests get 503 until the store answers');
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
    keys.close();
    await quota.close();
    throw err;
  }
  const { port } = server.address() as AddressInfo;
  const shutdownTimeoutMs = options.shutdownTimeoutMs ?? 5_000;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    async close() {
      keys.close();
      const closed = new Promise<void>((resolve, reject) => server.close((err) => (err ? reject(err) : resolve())));
      // A request stuck on the store must not hold the shutdown: past the deadline its connection is cut.
      const deadline = setTimeout(() => {
        log.warn({ shutdownTimeoutMs }, 'closing connections with requests still in flight');
        server.closeAllConnections();
      }, shutdownTimeoutMs);
      try {
        await closed;
      } finally {
        clearTimeout(deadline);
      }
      await quota.close();
    },
  };
}
