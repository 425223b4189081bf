import { z } from 'zod';

const optionalUrl = (what: string) =>
  z
    .string()
    .trim()
    .optional()
    .transform((v) => (v === '' ? undefined : v))
    .refine((v) => v === undefined || URL.canParse(v), { message: `must be a URL (${what})` });

const positiveInt = (fallback: number) => z.coerce.number().int().positive().default(fallback);

/**
 * Every environment variable the service reads, with its default. One schema for all roles:
 * a role ignores what it does not use. The README's configuration table mirrors this list.
 */
export const configSchema = z.object({
  /** HTTP port of the API. */
  PORT: z.coerce.number().int().min(0).max(65535).default(8080),
  /** Data directory of the embedded ClickHouse engine (chDB), used when CLICKHOUSE_URL is unset. */
  MDS_DATA_DIR: z.string().min(1).default('./data'),
  /** ClickHouse server URL (http://user:password@host:8123); unset = embedded chDB. */
  CLICKHOUSE_URL: optionalUrl('ClickHouse HTTP endpoint'),
  /** Database that holds the service's tables, created if missing. */
  CLICKHOUSE_DATABASE: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be a plain identifier').default('mds'),
  /** Comma-separated Kafka bootstrap brokers (host:port,...); unset = in-process bus. */
  KAFKA_BROKERS: z
    .string()
    .trim()
    .optional()
    .transform((v) => (v ? v.split(',').map((s) => s.trim()).filter(Boolean) : undefined))
    .refine((v) => v === undefined || v.every((b) => /^[^:\s]+:\d+$/.test(b)), {
      message: 'must be host:port[,host:port...]',
    }),
  /** Redis URL (redis://host:port) for the shared quota and jobs; unset = in-memory quota. */
  REDIS_URL: optionalUrl('redis://host:port'),
  /** API key provisioned by `npm run demo`; a random one is generated and printed when unset. */
  DEMO_API_KEY: z.string().min(16, 'must be at least 16 characters').optional(),
  /** Requests per key per fixed hour. */
  QUOTA_PER_HOUR: positiveInt(600),
  /** pino log level. */
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /** Binance spot websocket base URL (override to point the collector at the simulator). */
  VENUE_BINANCE_WS_URL: z.string().url().default('wss://stream.binance.com:9443'),
  /** Binance spot REST base URL. */
  VENUE_BINANCE_REST_URL: z.string().url().default('https://api.binance.com'),
  /** Set by `npm run demo`: responses that name their source say the data is simulated. */
  MDS_SIMULATED: z
    .enum(['0', '1', 'false', 'true'])
    .default('0')
    .transform((v) => v === '1' || v === 'true'),
  /** Rows the aggregator accumulates before an insert. */
  AGGREGATE_BATCH_ROWS: positiveInt(10_000),
  /** Longest time (ms) a trade waits in the aggregator before its batch is inserted. */
  AGGREGATE_BATCH_MS: positiveInt(1_000),
  /** An index price older than this (ms) is reported with measured=false. */
  INDEX_STALE_AFTER_MS: positiveInt(60_000),
});

export type Config = z.infer<typeof configSchema>;

export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** Parses the environment once at start; the error names every variable that is wrong. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const result = configSchema.safeParse(env);
  if (result.success) return result.data;
  const lines = result.error.issues.map((i) => `  ${i.path.join('.')}=${JSON.stringify(env[String(i.path[0])] ?? '')}: ${i.message}`);
  throw new ConfigError(`invalid configuration:\n${lines.join('\n')}`);
}
