import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { Config } from '../infra/config.ts';
import { httpServerOptions, limitConnections, type HttpLimitsConfig } from '../infra/connectionLimits.ts';
import type { Logger } from '../infra/log.ts';
import type { Metrics } from '../infra/metrics.ts';
import type { StoreCalls } from '../infra/store.ts';
import { createApp, type AppDeps } from './app.ts';
import { ApiError } from './errors.ts';
import { stopSharedAssetMarkets } from './read/assetMarket.ts';
import { KeyStore, type KeyStoreOptions } from './keys.ts';
import { createQuota } from './quota.ts';
import { writeRawError } from './rawError.ts';
import { startStream, type StreamConfig } from './stream/streamServer.ts';
import type { TradeSource } from './stream/tradeFeed.ts';

export interface ApiServer {
  /** http://127.0.0.1:<port> */
  url: string;
  port: number;
  /** The API keys this server checks: a key made or revoked through it applies at once here (the admin channel uses it). */
  keys: KeyStore;
  /**
   * Stops accepting requests, waits for those in flight at most `shutdownTimeoutMs`, then closes
   * every connection; stops the key reloads and releases the quota store. The store stays open.
   */
  close(): Promise<void>;
}

export interface StartApiOptions {
  /** A migrated store; the caller owns it and closes it. */
  store: StoreCalls;
  config: Pick<Config, 'PORT' | 'QUOTA_PER_HOUR' | 'REDIS_URL' | 'INDEX_STALE_AFTER_MS' | 'STORE_MIN_FREE_MB' | 'MDS_SIMULATED' | 'STATUS_ASSETS' | 'PUBLIC_BASE_URL' | 'OPS_ALLOWED_HOSTS'> & StreamConfig & HttpLimitsConfig;
  log: Logger;
  /** Namespace of the quota counters in Redis (default mds:quota). */
  quotaKeyPrefix?: string;
  /** Operator endpoints and request metrics (see AppDeps). */
  ops?: AppDeps['ops'];
  /** Where the counts of open, refused and timed-out connections go (mds_http_connections_*); unset = not exported. */
  metrics?: Metrics;
  /** Longest wait (ms) of close() for requests in flight before it cuts their connections (default 5000). */
  shutdownTimeoutMs?: number;
  /** Reload interval and staleness bound of the in-memory API keys (KeyStore defaults: 5 s, 10 min). */
  keyStore?: KeyStoreOptions;
  /** What the stream's trades channel sends (`busTrades(bus)`); unset = that channel sends nothing. */
  trades?: TradeSource;
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
  const stream = await startStream({ store, keys, quota, trades: options.trades, config, log: log.child({ part: 'stream' }) });
  const app = createApp({ store, keys, quota, config, log, ops: options.ops, streamToken: stream.tokenHandler });
  // Timeouts and caps on connections (infra/connectionLimits.ts): Node's defaults let idle sockets take every file descriptor.
  const server = createServer(httpServerOptions(config), app);
  const connections = limitConnections(server, config, log, options.metrics);
  server.listen(config.PORT);
  answerParserErrors(server, connections);
  stream.attach(server);
  try {
    await once(server, 'listening');
  } catch (err) {
    keys.close();
    stopSharedAssetMarkets(store);
    await stream.close();
    await quota.close();
    throw err;
  }
  const { port } = server.address() as AddressInfo;
  const shutdownTimeoutMs = options.shutdownTimeoutMs ?? 5_000;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    keys,
    async close() {
      keys.close();
      stopSharedAssetMarkets(store);
      const closed = new Promise<void>((resolve, reject) => server.close((err) => (err ? reject(err) : resolve())));
      // Upgraded sockets count as the server's connections: they must go for it to close.
      await stream.close();
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

/** Node's request-header limit (16 KiB, `--max-http-header-size`): the request line counts in it. */
const headerLimitKiB = 16;

/** A request Express never saw, refused with the API's error body. */
function refuse(socket: Socket, status: number, message: string): void {
  writeRawError(socket, status === 405 ? new ApiError(405, 'method_not_allowed', message, { Allow: 'GET, HEAD' }) : new ApiError(status, 'bad_request', message));
}

/**
 * Requests Node's HTTP parser rejects before Express runs (too large, malformed, CONNECT) still get
 * the API's error body and a request id, not an empty answer or none at all.
 */
function answerParserErrors(server: Server, connections: { countTimeout(): void }): void {
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Socket) => {
    if (err.code === 'ECONNRESET') return void socket.destroy();
    if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
      connections.countTimeout();
      refuse(socket, 408, 'no complete request came in time (HTTP_HEADERS_TIMEOUT_MS, HTTP_REQUEST_TIMEOUT_MS): send the request at once after connecting');
      // Closed now, not once the client ends its side: an idle client would keep it open otherwise.
      return void socket.destroy();
    }
    if (err.code === 'HPE_HEADER_OVERFLOW') {
      return refuse(socket, 431, `the request line and headers exceed ${headerLimitKiB} KiB: send fewer ids per request, or shorter headers`);
    }
    refuse(socket, 400, `the HTTP request is malformed (${err.code ?? 'parse error'}): check the method, the header names and values, and the framing`);
  });
  server.on('connect', (_req, socket: Socket) => refuse(socket, 405, 'CONNECT is not supported: this API answers GET and HEAD'));
  // Node answers an Expect other than 100-continue with an empty 417 unless someone listens here.
  server.on('checkExpectation', (req: IncomingMessage, res: ServerResponse) => {
    const error = new ApiError(417, 'bad_request', `Expect: ${String(req.headers.expect)} is not supported: send the request without it (100-continue is the one expectation met)`);
    const body = JSON.stringify(error.body());
    res.writeHead(417, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(body), 'x-request-id': randomUUID(), 'Access-Control-Allow-Origin': '*', Connection: 'close' });
    res.end(body);
  });
}
