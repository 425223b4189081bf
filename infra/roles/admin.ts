import { adminSocketPath, serveAdminChannel } from '../../api/adminChannel.ts';
import type { KeyStore } from '../../api/keys.ts';
import type { RoleContext } from './context.ts';

/**
 * The admin channel of a process that holds the embedded store and serves the API: `npm run keys`
 * reaches this process's KeyStore through <MDS_DATA_DIR>/admin.sock, so a key made or revoked
 * applies at once, without stopping the service. With CLICKHOUSE_URL the CLI opens the store
 * itself. A channel that cannot start does not stop the service: the log says why.
 */
export async function startAdminChannel({ config, log, life }: Pick<RoleContext, 'config' | 'log' | 'life'>, keys: KeyStore): Promise<void> {
  if (config.CLICKHOUSE_URL !== undefined) return;
  const path = adminSocketPath(config.MDS_DATA_DIR);
  try {
    const channel = await serveAdminChannel(path, keys, log.child({ part: 'admin' }));
    life.add('admin-channel', 'front', () => channel.close());
    log.info({ socket: path }, 'admin channel listening: npm run keys works while the service runs');
  } catch (err) {
    log.warn({ err, socket: path }, 'admin channel not started: npm run keys works only with the service stopped');
  }
}
