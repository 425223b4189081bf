import { z } from 'zod';
import { redactUrl } from './redact.ts';
import { parseRetentionDays } from './retentionPolicy.ts';

const optionalUrl = (what: string) =>
  z
    .string()
    .trim()
    .optional()
    .transform((v) => (v === '' ? undefined : v))
    .refine((v) => v === undefined || URL.canParse(v), { message: `must be a URL (${what})` });

const positiveInt = (fallback: number) => z.coerce.number().int().positive().default(fallback);
/** For variables whose default belongs to the code that reads them (the index engine's). */
const optionalPositiveInt = z.coerce.number().int().positive().optional();

/**
 * Every environment variable the service reads, with its default. One schema for all roles:
 * a role ignores what it does not use. The README's configuration table mirrors this list.
 */
export const configSchema = z.object({
  /** HTTP port of the API. */
  PORT: z.coerce.number().int().min(0).max(65535).default(8080),
  /**
   * The address clients reach the API at (http(s)://host[:port][/prefix]): every URL a response
   * carries (coin logos) is made absolute with it. Unset = those URLs are paths on the API's own
   * origin (`npm run demo` sets http://127.0.0.1:<PORT>). Never taken from a request's Host header,
   * which a client chooses and a cached response would hand to everyone.
   */
  PUBLIC_BASE_URL: z
    .string()
    .trim()
    .optional()
    .transform((v) => (v ? v.replace(/\/+$/, '') : undefined))
    .refine((v) => v === undefined || (/^https?:\/\/[^/?#\s]+(\/[^?#\s]*)?$/.test(v) && URL.canParse(v)), {
      message: 'must be an http(s) URL without query or fragment, e.g. https://api.example.com',
    }),
  /** Data directory of the embedded ClickHouse engine (chDB), used when CLICKHOUSE_URL is unset. */
  MDS_DATA_DIR: z.string().min(1).default('./data'),
  /**
   * Directory with an operator's `assets.json` and `categories.json` (format: infra/catalog/CATALOG.md)
   * that replace the bundled catalog; unset = bundled. Read by infra/catalog/catalog.ts when it is
   * imported, which also validates it (the error names the file, the entry and the field).
   */
  MDS_CATALOG_DIR: z.string().trim().min(1).optional(),
  /**
   * The operator's identities file (format: infra/catalog/CATALOG.md, "Discovered assets"): venue
   * tickers mapped to a known asset, and colliding tickers decided apart. Unset = <MDS_DATA_DIR>/
   * identities.json when it exists. Read by infra/catalog/identities.ts when it is imported.
   */
  MDS_IDENTITIES_FILE: z.string().trim().min(1).optional(),
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
  /**
   * How long Kafka waits for a silent consumer (a killed aggregator) before its partitions go to
   * another member: a replacement consumes after at most this. Brokers accept 6 s to 30 min by default.
   */
  KAFKA_SESSION_TIMEOUT_MS: z.coerce.number().int().min(6_000).max(1_800_000).default(30_000),
  /** Redis URL (redis://host:port) for the shared quota and jobs; unset = in-memory quota. */
  REDIS_URL: optionalUrl('redis://host:port'),
  /** API key provisioned by `npm run demo`; a random one is generated and shown on the terminal when unset. As long as a generated key, so it cannot be guessed. */
  DEMO_API_KEY: z.string().min(32, 'must be at least 32 characters, as a generated key (e.g. the output of `openssl rand -hex 16`)').optional(),
  /**
   * Days of SIMULATED history `npm run demo` writes and imports into an empty store (infra/roles/demo.ts).
   * Fear & greed needs 13 of them before its first reading, and a reading 30 days back for lastMonth.
   */
  DEMO_HISTORY_DAYS: positiveInt(45),
  /**
   * Synthetic assets the demo's simulator lists on top of the catalog's (simulator/universe.ts): the
   * long tail of a real market (each on one venue or many, most trading a few times a minute, some
   * tickers shared or scaled, listings and delistings as it runs), all collected as discovered assets.
   * 0 = none, the default: at 2,000 this 2-core machine fell behind (test/bench/RESULTS.md, "The whole market").
   */
  DEMO_UNIVERSE_ASSETS: z.coerce.number().int().min(0).max(10_000).default(0),
  /**
   * Server secret the API keys are hashed with (HMAC-SHA256), so a copy of the api_keys table does
   * not reveal them; never logged. Every API replica and `npm run keys` must share it. Unset with
   * the embedded store: generated once into <MDS_DATA_DIR>/api-key-secret (api/keySecret.ts);
   * required with CLICKHOUSE_URL.
   */
  API_KEY_SECRET: z.string().min(32, 'must be at least 32 characters (e.g. the output of `openssl rand -hex 32`)').optional(),
  /** Requests per key per fixed hour. */
  QUOTA_PER_HOUR: positiveInt(600),
  /** Open connections to the stream (GET /v1/stream) one key may hold on one API replica; opening one counts one request of the quota. */
  STREAM_MAX_CONNECTIONS_PER_KEY: positiveInt(5),
  /** Subscriptions (channel x asset, x interval for candles) one stream connection may hold; each subscribe message counts one request. */
  STREAM_MAX_SUBSCRIPTIONS_PER_CONNECTION: positiveInt(100),
  /** Bytes a stream connection may leave unsent (its client reads too slowly) before it is closed with code 4008. */
  STREAM_MAX_BUFFERED_BYTES: positiveInt(1_048_576),
  // What one client may hold on the API's port (infra/connectionLimits.ts); a port open to the
  // internet also needs a reverse proxy in front (README "Exposing the port").
  /**
   * Longest time (ms) a client may take to send a request's headers, the first one counted from the
   * connection's opening: an idle connection that sends nothing is closed after it. At most HTTP_REQUEST_TIMEOUT_MS.
   */
  HTTP_HEADERS_TIMEOUT_MS: positiveInt(10_000),
  /** Longest time (ms) a connection may take to send a whole request, headers and body. */
  HTTP_REQUEST_TIMEOUT_MS: positiveInt(30_000),
  /** A kept-alive connection that sends no next request within this (ms) is closed. */
  HTTP_KEEP_ALIVE_TIMEOUT_MS: positiveInt(5_000),
  /**
   * Open connections to the API's port (stream connections included); one more is closed at once.
   * Loopback may open 16 beyond it (the operator's /health). Unset = a quarter of the process's
   * open-file limit (Linux: /proc/self/limits; 1,000 elsewhere), so they never take the store's files.
   */
  HTTP_MAX_CONNECTIONS: optionalPositiveInt,
  /**
   * Open connections one client address (an IPv6 /64) may hold on the API's port. Loopback is not
   * capped here (a proxy on this host); a reverse proxy on another host needs it raised to its own number.
   */
  HTTP_MAX_CONNECTIONS_PER_ADDRESS: positiveInt(100),
  /** Longest wait (ms) for one store query; past it the caller gets StoreTimeoutError (the API answers 503 or stale data). */
  STORE_QUERY_TIMEOUT_MS: positiveInt(10_000),
  /** Longest wait (ms) for one store insert; a timed-out insert may still land; the event sinks retry it with the same dedup token. */
  STORE_INSERT_TIMEOUT_MS: positiveInt(30_000),
  /**
   * Port of the read-only SQL endpoint (ClickHouse's HTTP interface, infra/sql/SQL.md) on the embedded
   * store, served by the process that holds it; unset = off (`npm run demo` sets 8123). Not with
   * CLICKHOUSE_URL: readers then use the server itself.
   */
  SQL_PORT: z.coerce.number().int().min(0).max(65535).optional(),
  /** Address the SQL endpoint binds; loopback unless set. */
  SQL_HOST: z.string().trim().min(1).default('127.0.0.1'),
  /** The SQL endpoint's one user, read-only. */
  SQL_USER: z.string().regex(/^[A-Za-z_][A-Za-z0-9_.-]*$/, 'must be a plain user name').default('reader'),
  /** Its password; unset = generated once into <MDS_DATA_DIR>/sql-password (owner-only). Never logged. */
  SQL_PASSWORD: z.string().min(16, 'must be at least 16 characters (e.g. the output of `openssl rand -base64 18`)').optional(),
  /** Longest run (seconds) of one SQL query (max_execution_time); past it the engine stops it with code 159. */
  SQL_MAX_EXECUTION_TIME_S: positiveInt(30),
  /** Most rows one SQL result may have (max_result_rows); more = code 396, never a cut result. */
  SQL_MAX_RESULT_ROWS: positiveInt(1_000_000),
  /** Most bytes one SQL result may have (max_result_bytes). */
  SQL_MAX_RESULT_BYTES: positiveInt(256 * 1_048_576),
  /** Most memory (bytes) one SQL query may use (max_memory_usage). */
  SQL_MAX_MEMORY_BYTES: positiveInt(1_073_741_824),
  /** Threads one SQL query may use (max_threads): the rest of the machine stays with ingestion and the API. */
  SQL_MAX_THREADS: positiveInt(1),
  /** SQL queries the reader may have running at once; one more is refused with code 202. */
  SQL_MAX_CONCURRENT_QUERIES: positiveInt(2),
  /**
   * Free space (MB) the store's disk must keep, for merges (a merge writes its new part before it
   * drops the old ones): below it /ready fails (`disk`) and prices are served measured=false.
   */
  STORE_MIN_FREE_MB: z.coerce.number().int().min(0).default(1024),
  /**
   * Days the time-series tables keep their rows, as `table=days,...` (e.g. trades=365,market_seconds=90),
   * applied as TTLs when the store is migrated; a table not named keeps its default (infra/retentionPolicy.ts;
   * every table and default in infra/SCHEMA.md, "Retention").
   */
  STORE_RETENTION_DAYS: z
    .string()
    .default('')
    .transform((v, ctx) => {
      try {
        return parseRetentionDays(v);
      } catch (err) {
        ctx.addIssue({ code: 'custom', message: (err as Error).message });
        return z.NEVER;
      }
    }),
  /**
   * Longest time (ms) the whole stop of a process may take (SIGTERM, SIGINT, a fatal error): the API
   * stops accepting first, then the other parts stop in stages, the parts of a stage all at once
   * (infra/roles/lifecycle.ts); what has not stopped by then is logged by name and the process exits
   * without it. Keep it under the orchestrator's grace period (Kubernetes kills at 30 s).
   */
  SHUTDOWN_DEADLINE_MS: positiveInt(15_000),
  /**
   * Most JavaScript heap (MB, V8's old generation) each worker thread of the service may hold: the
   * collectors, the API (the demo's simulator has a bound of its own). V8 collects harder as a heap
   * nears it, so their garbage stays within it; a thread whose live data passes it fails, and the
   * process stops as for any worker failure (its supervisor starts it again; the trades missed
   * meanwhile are recovered). 0: V8's default.
   */
  THREAD_HEAP_MB: z.coerce.number().int().min(0).default(512),
  /**
   * Most JavaScript heap (MB) the process's main thread may keep: the store's client, the in-process
   * bus, the sinks and the index runner. Once it holds more after three full collections in a row,
   * the process logs it and stops in order, as for a worker thread out of its heap (its supervisor
   * starts it again; the trades missed meanwhile are recovered). Watched by the process itself
   * (infra/roles/mainHeap.ts), not given to V8: node's --max-old-space-size would also override every
   * worker's THREAD_HEAP_MB. 0: no bound but V8's own (about 4 GB).
   */
  MAIN_HEAP_MB: z.coerce.number().int().min(0).default(1024),
  /**
   * How far a thread's heap may grow past what a full collection left in use before V8 collects
   * again (percent). V8's own choice lets a heap with its default limit (the main thread's) grow
   * to four times its live data: on the universe demo the main thread held 558 MB for 107-339 MB in
   * use. A V8 flag, so every thread follows it; set before the worker threads start. 0: V8's own choice.
   */
  HEAP_GROWING_PERCENT: z.coerce.number().int().min(0).max(300).default(100),
  /** pino log level. */
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /**
   * Level of the API's access log line (request id, method, route, status, ms; one per request).
   * Default debug: hidden at LOG_LEVEL=info, since a busy API would drown the log; set info to see
   * them. A 5xx answer is logged at warn or above whatever this says (silent: none at all).
   */
  ACCESS_LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('debug'),
  /** Set by `npm run demo`: responses that name their source say the data is simulated. */
  MDS_SIMULATED: z
    .enum(['0', '1', 'false', 'true'])
    .default('0')
    .transform((v) => v === '1' || v === 'true'),
  /**
   * Minutes between re-listings of each venue's markets, native or ccxt (new markets subscribed, delisted
   * ones dropped): a venue's new listing is collected within this.
   */
  INGEST_MARKETS_REFRESH_MIN: positiveInt(2),
  /**
   * Collect the markets whose base asset the catalog does not map too, each as the discovered asset
   * of its venue and ticker (infra/catalog/discovered.ts); 0 collects catalog assets only.
   */
  INGEST_DISCOVER: z
    .enum(['0', '1', 'false', 'true'])
    .default('1')
    .transform((v) => v === '1' || v === 'true'),
  /**
   * Nice value (0-19, Linux) of the collectors' thread in a process that also serves the API (roles
   * all and demo): short of CPU, the API and the store go first and the venues' sockets buffer. It
   * stops at the process's priority where it may raise its own back (CAP_SYS_NICE, e.g. root).
   */
  INGEST_THREAD_NICE: z.coerce.number().int().min(0).max(19).default(10),
  /**
   * At a start, the collectors recover what was printed since the last trade the store holds of each
   * market, if it is at most this many hours old (and within the venue's REST reach). The ingest
   * role reads it from the store it is given (CLICKHOUSE_URL); without one it does not know it.
   */
  INGEST_RECOVERY_START_HOURS: positiveInt(168),
  /** Rows the aggregator accumulates before an insert. */
  AGGREGATE_BATCH_ROWS: positiveInt(10_000),
  /** Longest time (ms) a trade waits in the aggregator before its batch is inserted. */
  AGGREGATE_BATCH_MS: positiveInt(1_000),
  /** In-process bus: records one topic may hold (published, not yet committed by every reader) before it refuses more. */
  BUS_MAX_RECORDS_PER_TOPIC: positiveInt(100_000),
  /** In-process bus: estimated heap megabytes one topic may hold before it refuses more (books conflate first). */
  BUS_MAX_MB_PER_TOPIC: positiveInt(128),
  /** Bearer token /metrics requires from any address; unset = /metrics answers loopback clients only. */
  METRICS_TOKEN: z.string().min(16, 'must be at least 16 characters').optional(),
  /**
   * Host names (comma-separated) the operator endpoints answer to besides IP addresses, `localhost`
   * and PUBLIC_BASE_URL's host: another name in `Host` is refused there (DNS rebinding).
   */
  OPS_ALLOWED_HOSTS: z
    .string()
    .optional()
    .transform((v) => (v ?? '').split(',').map((h) => h.trim().toLowerCase()).filter(Boolean)),
  /** /ready fails when the last trade insert is older than this (ms), in a process that runs the aggregator. */
  READY_MAX_INGEST_AGE_MS: positiveInt(30_000),
  /** /ready fails when the index is further than this (ms) behind now. */
  READY_MAX_INDEX_LAG_MS: positiveInt(30_000),
  /** Test runs only (npm run soak): the store is wrapped so that `POST /__faults/store` (loopback) can make it fail. */
  MDS_FAULT_INJECTION: z
    .enum(['0', '1', 'false', 'true'])
    .default('0')
    .transform((v) => v === '1' || v === 'true'),
  /** An index price older than this (ms) is reported with measured=false. */
  INDEX_STALE_AFTER_MS: positiveInt(60_000),
  /**
   * Catalog asset ids whose index price, sparkline and 1m candles the public status page at `/`
   * shows without a key (comma-separated, at most 10; empty = none): the operator's choice of what
   * the page gives away. Unknown ids stop the API at start.
   */
  STATUS_ASSETS: z
    .string()
    .default('bitcoin,ethereum,solana')
    .transform((v) => v.split(',').map((s) => s.trim()).filter(Boolean))
    .refine((v) => v.length <= 10, { message: 'at most 10 asset ids' }),
  // Index price engine. Unset = the engine's default: its one home is indexParamsSchema in
  // aggregate/indexPrice.ts and indexScheduleSchema in aggregate/indexRunner.ts (with precedents, as
  // in aggregate/METHODOLOGY.md "Index price"); indexSettingsFromConfig maps these variables onto them.
  /** outlier: a market more than this many percent from the median of the markets still in (outlierThreshold × 100). */
  INDEX_OUTLIER_PCT: z.coerce.number().positive().max(100).optional(),
  /** An outlier is re-admitted once within this percentage of INDEX_OUTLIER_PCT (outlierReadmitFraction × 100). */
  INDEX_OUTLIER_READMIT_PCT: z.coerce.number().positive().max(100).optional(),
  /** low_share: a market with less than this percentage of the asset's trailing volume (minShare × 100). */
  INDEX_MIN_SHARE_PCT: z.coerce.number().min(0).max(100).optional(),
  /** stale: never before the last trade is this old (ms; staleMinMs)... */
  INDEX_STALE_MIN_MS: optionalPositiveInt,
  /** ...always once it is this old (ms; staleMaxMs)... */
  INDEX_STALE_MAX_MS: optionalPositiveInt,
  /** ...and in between once it is older than this many mean inter-trade intervals (staleIntervals). */
  INDEX_STALE_INTERVALS: z.coerce.number().positive().optional(),
  /** Fewest healthy venues behind the price of an asset with that many eligible venues; fewer = fail closed, last price carried (minHealthyVenues). */
  INDEX_MIN_VENUES: optionalPositiveInt,
  /** crossed_book applies when the market's latest book was measured within this many ms of the second (crossedBookMaxAgeMs). */
  INDEX_CROSSED_BOOK_MAX_AGE_MS: optionalPositiveInt,
  /** Include perpetual markets in the index price: 1/true or 0/false (includePerpetuals). */
  INDEX_PERPETUALS: z
    .enum(['0', '1', 'false', 'true'])
    .optional()
    .transform((v) => (v === undefined ? undefined : v === '1' || v === 'true')),
  /** Trailing window of the volume weights and shares, whole minutes (volumeWindowMinutes). */
  INDEX_VOLUME_WINDOW_MIN: optionalPositiveInt,
  /** Trailing window of the mean inter-trade interval, whole minutes (intervalWindowMinutes). */
  INDEX_INTERVAL_WINDOW_MIN: optionalPositiveInt,
  /** The index of a second is computed once it ended this long ago (ms), so late trades land first (lagMs). */
  INDEX_LAG_MS: z.coerce.number().int().min(0).optional(),
  /** Seconds already computed that the index runner computes again each second, for late trades (recomputeSeconds). */
  INDEX_RECOMPUTE_S: z.coerce.number().int().min(0).optional(),
  /** Most seconds the index runner computes in one step while catching up (maxSecondsPerTick). */
  INDEX_MAX_SECONDS_PER_TICK: optionalPositiveInt,
  /** With no index stored yet, the runner starts at most this many hours back (backfillMs / 3600000). */
  INDEX_BACKFILL_HOURS: optionalPositiveInt,
  /** The index runner writes its verdicts per market (index_constituents_latest) for one second in this many (constituentsEveryS). */
  INDEX_CONSTITUENTS_EVERY_S: optionalPositiveInt,
  /**
   * EVM chains whose DEX activity is indexed (RPC URL, factories, tokens): the path of a JSON file
   * or the JSON itself, validated by aggregate/jobs/chains/chainsConfig.ts. Unset = no chain indexed.
   */
  CHAINS_CONFIG: z
    .string()
    .trim()
    .optional()
    .transform((v) => (v === '' ? undefined : v)),
  /**
   * Directory of US spot ETF flow files (btc.csv, eth.csv, sol.csv; format in aggregate/METHODOLOGY.md)
   * that a job imports every hour. Unset = no ETF flows (the demo uses infra/reference/etf-flows-demo/).
   */
  ETF_FLOWS_DIR: z
    .string()
    .trim()
    .optional()
    .transform((v) => (v === '' ? undefined : v)),
  /**
   * ECB-style daily FX CSV (Date,USD,JPY,... in units per EUR; extra currency columns allowed) that
   * a job imports daily into fx_reference_rates, for `vs` currencies without a measured rate.
   * Unset = no reference rates (the demo uses infra/reference/fx-demo-snapshot.csv).
   */
  FX_REFERENCE_FILE: z
    .string()
    .trim()
    .optional()
    .transform((v) => (v === '' ? undefined : v)),
});

export type Config = z.infer<typeof configSchema>;

export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** Variables whose value an error message must not repeat. */
const secretVariables = new Set(['DEMO_API_KEY', 'API_KEY_SECRET', 'METRICS_TOKEN', 'SQL_PASSWORD']);

/** A wrong value as the error shows it: URLs without their credentials, secrets by length only. */
function shownValue(name: string, value: string): string {
  return secretVariables.has(name) ? `(${value.length} characters)` : JSON.stringify(redactUrl(value));
}

/** Parses the environment once at start; the error names every variable that is wrong. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const result = configSchema.safeParse(env);
  const lines = result.success
    ? ruleBreaches(result.data)
    : result.error.issues.map((i) => `  ${i.path.join('.')}=${shownValue(String(i.path[0]), env[String(i.path[0])] ?? '')}: ${i.message}`);
  if (result.success && lines.length === 0) return result.data;
  throw new ConfigError(`invalid configuration:\n${lines.join('\n')}`);
}

/** Rules between two variables, which no one variable's schema can state (a refined schema could no longer be picked from). */
function ruleBreaches(config: Config): string[] {
  const { HTTP_HEADERS_TIMEOUT_MS: headers, HTTP_REQUEST_TIMEOUT_MS: request } = config;
  // Node's http.Server refuses a headers timeout longer than the request timeout.
  return headers > request ? [`  HTTP_HEADERS_TIMEOUT_MS="${headers}": must be at most HTTP_REQUEST_TIMEOUT_MS (${request})`] : [];
}
