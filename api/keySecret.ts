import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { ConfigError, configSchema, type Config } from '../infra/config.ts';
import { writeSecretFileOnce } from '../infra/secretFile.ts';

/** Name of the generated secret's file in MDS_DATA_DIR (embedded store, API_KEY_SECRET unset). */
export const apiKeySecretFileName = 'api-key-secret';

/**
 * The server secret API keys are hashed with: API_KEY_SECRET when set. Unset with the embedded
 * store, one generated on first use and kept in `<MDS_DATA_DIR>/api-key-secret` (owner-only), so
 * the service, its restarts and `npm run keys` share it. With a ClickHouse server there is no one
 * directory every replica shares: a ConfigError says to set API_KEY_SECRET.
 */
export function loadApiKeySecret(config: Pick<Config, 'API_KEY_SECRET' | 'CLICKHOUSE_URL' | 'MDS_DATA_DIR'>): string {
  if (config.API_KEY_SECRET !== undefined) return config.API_KEY_SECRET;
  if (config.CLICKHOUSE_URL !== undefined) {
    throw new ConfigError(
      'API_KEY_SECRET is required with CLICKHOUSE_URL: set it to one random value of 32+ characters (e.g. `openssl rand -hex 32`), the same on every API replica and wherever `npm run keys` runs',
    );
  }
  const dir = resolve(config.MDS_DATA_DIR);
  const file = join(dir, apiKeySecretFileName);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  try {
    return readSecretFile(file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  writeSecretFileOnce(file, `${randomBytes(32).toString('hex')}\n`);
  return readSecretFile(file);
}

/** The file's secret, held to API_KEY_SECRET's rule; the message never repeats the content. */
function readSecretFile(file: string): string {
  const secret = readFileSync(file, 'utf8').trim();
  const checked = configSchema.shape.API_KEY_SECRET.safeParse(secret);
  if (!checked.success) {
    throw new ConfigError(`${file} holds no usable API key secret (${secret.length} characters; ${checked.error.issues[0]?.message}); restore it from a backup, or delete it to have a new one made (every key must then be made again)`);
  }
  return secret;
}
