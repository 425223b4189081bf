import { indexSettingsFromConfig, type IndexRunner } from '../../aggregate/indexRunner.ts';
import { importChannelCommands } from '../../history/channelTarget.ts';
import { serveStoreChannel, storeSocketPath } from '../storeChannel.ts';
import type { RoleContext } from './context.ts';
import type { RoleStore } from './store.ts';

/**
 * The store channel of a process that holds the embedded store, whatever its role: `npm run import`
 * reaches this process's store through <MDS_DATA_DIR>/store.sock (chDB lets one process open it).
 * With CLICKHOUSE_URL the import opens the store itself. `index`, the role's index runner where it
 * runs one, is told to compute again the seconds an import leaves to it. A channel that cannot
 * start does not stop the service: the log says why.
 */
export async function startStoreChannel({ config, log, life }: Pick<RoleContext, 'config' | 'log' | 'life'>, { store }: RoleStore, index?: IndexRunner): Promise<void> {
  if (config.CLICKHOUSE_URL !== undefined) return;
  const path = storeSocketPath(config.MDS_DATA_DIR);
  const channelLog = log.child({ part: 'store-channel' });
  const imports = importChannelCommands(store, { embedded: true, index: indexSettingsFromConfig(config), log: channelLog, live: index });
  try {
    const channel = await serveStoreChannel(path, store, imports.commands, channelLog);
    life.add('store-channel', 'front', async () => {
      await channel.close();
      await imports.close();
    });
    log.info({ socket: path }, 'store channel listening: npm run import works while the service runs');
  } catch (err) {
    await imports.close();
    log.warn({ err, socket: path }, 'store channel not started: npm run import works only with the service stopped');
  }
}
