import { parseArgs } from 'node:util';
import { answerHelpAndVersion } from '../infra/cli.ts';
import { ConfigError, loadConfig } from '../infra/config.ts';
import { migrate } from '../infra/migrate.ts';
import { StoreInUseError, openStore, type Store } from '../infra/store.ts';
import { KeyStore } from './keys.ts';

const usage = `usage: npm run keys -- <command>
  create --name <label>   make a key; it is printed once and stored only hashed
  list                    list keys (prefix, name, created, revoked)
  revoke <prefix>         revoke the keys with this prefix
  --help, -h              this text
  --version               the service's version`;

type Command = { kind: 'create'; name: string } | { kind: 'list' } | { kind: 'revoke'; prefix: string };

class UsageError extends Error {
  override name = 'UsageError';
}

function parseCommand(argv: string[]): Command {
  let parsed;
  try {
    parsed = parseArgs({ args: argv, allowPositionals: true, options: { name: { type: 'string' } } });
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  const { positionals, values } = parsed;
  const [command, ...rest] = positionals;
  if (command === 'create' && rest.length === 0 && values.name?.trim()) return { kind: 'create', name: values.name.trim() };
  if (command === 'create') throw new UsageError('create needs --name <label> and nothing else');
  if (values.name !== undefined) throw new UsageError('--name goes with create only');
  if (command === 'list' && rest.length === 0) return { kind: 'list' };
  if (command === 'revoke' && rest.length === 1 && rest[0]) return { kind: 'revoke', prefix: rest[0] };
  throw new UsageError(command === undefined ? 'no command given' : `bad arguments for ${JSON.stringify(command)}`);
}

async function run(command: Command, keys: KeyStore): Promise<number> {
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
        const state = k.revokedAt === null ? 'active' : `revoked ${new Date(k.revokedAt).toISOString()}`;
        console.log([k.prefix, JSON.stringify(k.name), new Date(k.createdAt).toISOString(), state].join('\t'));
      }
      return 0;
    }
    case 'revoke': {
      const count = await keys.revoke(command.prefix);
      if (count === 0) {
        console.error(`no active key with prefix ${command.prefix}`);
        return 1;
      }
      console.log(`revoked ${count} key(s) with prefix ${command.prefix}`);
      return 0;
    }
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
  let store: Store;
  const config = (() => {
    try {
      return loadConfig();
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      console.error(err.message);
      return undefined;
    }
  })();
  if (!config) return 2;
  try {
    store = await openStore(config);
  } catch (err) {
    if (!(err instanceof StoreInUseError)) throw err;
    console.error(`${err.message}; stop the service first (or use CLICKHOUSE_URL)`);
    return 1;
  }
  try {
    await migrate(store);
    return await run(command, new KeyStore(store));
  } finally {
    await store.close();
  }
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    console.error(err);
    process.exitCode = 1;
  },
);
