// One API replica in its own process (chDB binds one data directory per process), driven by
// quotaAcrossProcesses.system.test.ts. It provisions API_KEY in its own store, listens on a free port,
// prints {"url": ...} once ready and serves until SIGTERM.
import { loadApiKeySecret } from '../../api/keySecret.ts';
import { startApi } from '../../api/server.ts';
import { KeyStore } from '../../api/keys.ts';
import { loadConfig } from '../../infra/config.ts';
import { createLogger } from '../../infra/log.ts';
import { migrate } from '../../infra/migrate.ts';
import { openStore } from '../../infra/store.ts';

const { DATA_DIR, API_KEY, QUOTA_PREFIX } = process.env;
if (!DATA_DIR || !API_KEY) throw new Error('apiProcess: DATA_DIR and API_KEY are required');

const config = loadConfig({ ...process.env, PORT: '0', MDS_DATA_DIR: DATA_DIR });
const log = createLogger('warn');
const store = await openStore(config);
await migrate(store);
// Replicas share API_KEY_SECRET, so one key has one hash, and one quota counter, on every replica.
const secret = loadApiKeySecret(config);
await new KeyStore(store, { secret }).ensure(API_KEY, 'replica-test');
const api = await startApi({ store, config, log, quotaKeyPrefix: QUOTA_PREFIX, keyStore: { secret } });
process.stdout.write(JSON.stringify({ url: api.url }) + '\n');

process.once('SIGTERM', () => {
  void api
    .close()
    .then(() => store.close())
    .then(() => process.exit(0));
});
