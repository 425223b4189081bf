import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { answerHelpAndVersion } from '../infra/cli.ts';
import { ConfigError, loadConfig, type Config } from '../infra/config.ts';
import { pendingMigrations, SchemaBehindError } from '../infra/migrate.ts';
import { redactCredentials } from '../infra/redact.ts';
import { StoreInUseError, openStore, type Store } from '../infra/store.ts';
import { AdminChannelAbsentError, AdminRefusedError, adminChannelClient, adminSocketPath } from './adminChannel.ts';
import { loadApiKeySecret } from './keySecret.ts';
import { AmbiguousPrefixError, KeyStore, type KeyAdmin } from './keys.ts';

const usage = `usage: npm run keys -- <command>
  create --name <label>   make a key; it is printed once and stored only as a keyed hash
  list                    list keys (prefix, name, created, state: active, revoked, or legacy (rotate))
  revoke <prefix> [--all] revoke the key with this prefix (--all: every key sharing it)
  --help, -h              this text
  --version               the service's version
With the embedded store, a running service (npm start, npm run demo, npm run api) is asked through
its admin channel, <MDS_DATA_DIR>/admin.sock, and applies the change at once; with the service
stopped, or with CLICKHOUSE_URL (which needs API_KEY_SECRET), the store is opened directly.
The store must be migrated (npm run migrate).`;

type Command = { kind: 'create'; name: string } | { kind: 'list' } | { kind: 'revoke'; prefix: string; all: boolean };

class UsageError extends Error {
  override name = 'UsageError';
}

function parseCommand(argv: string[]): Command {
  let parsed;
  try {
    parsed = parseArgs({ args: argv, allowPositionals: true, options: { name: { type: 'string' }, all: { type: 'boolean' } } });
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  const { positionals, values } = parsed;
  const [command, ...rest] = positionals;
  if (command === 'create' && rest.length === 0 && values.name?.trim()) return { kind: 'create', name: values.name.trim() };
  if (command === 'create') throw new UsageError('create needs --name <label> and nothing else');
  if (values.name !== undefined) throw new UsageError('--name goes with create only');
  if (command === 'list' && rest.length === 0) return { kind: 'list' };
  if (command === 'revoke' && rest.length === 1 && rest[0]) return { kind: 'revoke', prefix: rest[0], all: values.all === true };
  throw new UsageError(command === undefined ? 'no command given' : `bad arguments for ${JSON.stringify(command)}`);
}

async function run(command: Command, keys: KeyAdmin): Promise<number> {
  switch (command.kind) {
    case 'create': {
      const { key, prefix } = await keys.create(command.name);
      console.log(key);
      console.error(`created key ${prefix}... for ${JSON.stringify(command.name)}; it is not shown again, store it now`);
      return 0;
    }
    case 'list': {
      const rows = await keys.list();
      if (rows.length === 0) console.error('no keys');
      for (const k of rows) {
        const state = k.revokedAt !== null ? `revoked ${new Date(k.revokedAt).toISOString()}` : k.legacy ? 'legacy (rotate)' : 'active';
        console.log([k.prefix, JSON.stringify(k.name), new Date(k.createdAt).toISOString(), state].join('\t'));
      }
      return 0;
    }
    case 'revoke': {
      const count = await keys.revoke(command.prefix, { all: command.all });
      if (count === 0) {
        console.error(`no active key with prefix ${command.prefix}`);
        return 1;
      }
      console.log(`revoked ${count} key(s) with prefix ${command.prefix}`);
      return 0;
    }
  }
}

/** Exit code 1 with a one-line message: what went wrong and what to do, never a stack. */
class CliError extends Error {
  override name = 'CliError';
}

/**
 * The live process that holds the embedded store, from the status file chDB keeps in the data
 * directory while it is open (`PID: <n>`). Asked first because chDB, finding the directory locked,
 * prints its own DB::Exception on stderr before it fails.
 */
function embeddedStoreHolder(dataDir: string): number | undefined {
  let status: string;
  try {
    status = readFileSync(join(resolve(dataDir), 'status'), 'utf8');
  } catch {
    return undefined;
  }
  const pid = Number(/^PID: (\d+)$/m.exec(status)?.[1]);
  if (!Number.isInteger(pid) || pid <= 0) return undefined;
  try {
    process.kill(pid, 0);
    return pid;
  } catch (err) {
    // EPERM: alive, another user's; ESRCH: a holder that died (a stale file chDB will take over).
    return (err as NodeJS.ErrnoException).code === 'EPERM' ? pid : undefined;
  }
}

/** The command on the store itself: the service is stopped, or the store is a ClickHouse server. */
async function runOnStore(command: Command, config: Config): Promise<number> {
  const secret = loadApiKeySecret(config);
  const inUse = (what: string) =>
    new CliError(`${what} and no admin channel answers at ${adminSocketPath(config.MDS_DATA_DIR)} (the service is starting or stopping, or its role serves no API): retry, or stop it first`);
  const holder = config.CLICKHOUSE_URL === undefined ? embeddedStoreHolder(config.MDS_DATA_DIR) : undefined;
  if (holder !== undefined) throw inUse(`the embedded store in ${resolve(config.MDS_DATA_DIR)} is in use by process ${holder}`);
  let store: Store;
  try {
    store = await openStore(config, { queryTimeoutMs: config.STORE_QUERY_TIMEOUT_MS, insertTimeoutMs: config.STORE_INSERT_TIMEOUT_MS });
  } catch (err) {
    if (!(err instanceof StoreInUseError)) throw err;
    throw inUse(err.message);
  }
  try {
    const pending = await pendingMigrations(store);
    if (pending.length > 0) throw new CliError(new SchemaBehindError(pending).message);
    return await run(command, new KeyStore(store, { secret }));
  } finally {
    await store.close();
  }
}

async function main(): Promise<number> {
  answerHelpAndVersion(process.argv.slice(2), usage);
  let command: Command;
  try {
    command = parseCommand(process.argv.slice(2));
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    console.error(`${err.message}\n${usage}`);
    return 2;
  }
  let config: Config;
  try {
    config = loadConfig();
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    console.error(err.message);
    return 2;
  }
  try {
    if (config.CLICKHOUSE_URL === undefined) {
      try {
        return await run(command, adminChannelClient(adminSocketPath(config.MDS_DATA_DIR)));
      } catch (err) {
        // Nothing was sent: no service holds the store, so this process may open it.
        if (!(err instanceof AdminChannelAbsentError)) throw err;
      }
    }
    return await runOnStore(command, config);
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(err.message);
      return 2;
    }
    // What the operator can act on, in one line: no stack.
    if (!(err instanceof CliError || err instanceof AmbiguousPrefixError || err instanceof AdminRefusedError)) throw err;
    console.error(err.message);
    return 1;
  }
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    // Unexpected: the message and stack, without the credentials of any URL in them.
    console.error(redactCredentials(err instanceof Error ? (err.stack ?? err.message) : String(err)));
    process.exitCode = 1;
  },
);
