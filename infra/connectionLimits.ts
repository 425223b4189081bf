import { readFileSync } from 'node:fs';
import type { Server, ServerOptions } from 'node:http';
import { isIPv4, isIPv6, type Socket } from 'node:net';
import type { Config } from './config.ts';
import type { Logger } from './log.ts';
import { sampledCounter, sampledGauge, type Metrics } from './metrics.ts';
import { isLoopback } from './operatorAccess.ts';

/**
 * Bounds on what clients of an exposed HTTP port can hold. Node's defaults let an idle socket live
 * until `headersTimeout` (60 s, checked every 30 s) and take no bound on open sockets at all: idle
 * sockets then take every file descriptor of the process, and with them the store's and the
 * collectors' (the API, chDB and the collectors share one table in `all` and `demo`).
 */

export type HttpLimitsConfig = Pick<Config, 'HTTP_HEADERS_TIMEOUT_MS' | 'HTTP_REQUEST_TIMEOUT_MS' | 'HTTP_KEEP_ALIVE_TIMEOUT_MS' | 'HTTP_MAX_CONNECTIONS' | 'HTTP_MAX_CONNECTIONS_PER_ADDRESS'>;

/**
 * How often Node looks for requests past their headers or request timeout (`connectionsCheckingInterval`,
 * 30 s by default): a connection is closed at most this long after its deadline.
 */
const timeoutCheckMs = 1_000;

/** Node's http.Server options for these timeouts: a connection that sends no complete request is closed. */
export function httpServerOptions(config: HttpLimitsConfig): ServerOptions {
  return {
    headersTimeout: config.HTTP_HEADERS_TIMEOUT_MS,
    requestTimeout: config.HTTP_REQUEST_TIMEOUT_MS,
    keepAliveTimeout: config.HTTP_KEEP_ALIVE_TIMEOUT_MS,
    connectionsCheckingInterval: timeoutCheckMs,
  };
}

/** Share of the process's open-file limit that the port's connections may take by default; the rest is the store's and the collectors'. */
const openFilesShare = 4;
/** The default cap where the open-file limit cannot be read (not Linux). */
const fallbackMaxConnections = 1_000;
/**
 * Connections from loopback (the operator's curl, a health check on this host) allowed beyond the
 * cap: a flood from other addresses cannot lock the operator out of /health, /ready and /metrics.
 */
export const loopbackReserve = 16;

/** The soft open-file limit in the text of /proc/self/limits; undefined when absent or unlimited. */
export function openFileLimit(limitsText: string): number | undefined {
  const soft = /^Max open files\s+(\d+)\s/m.exec(limitsText)?.[1];
  return soft === undefined ? undefined : Number(soft);
}

/** This process's open-file limit, where the system says it (Linux); Node raised the soft limit to the hard one at start. */
function processOpenFileLimit(): number | undefined {
  try {
    return openFileLimit(readFileSync('/proc/self/limits', 'utf8'));
  } catch {
    return undefined;
  }
}

/** HTTP_MAX_CONNECTIONS when set, else a quarter of the open-file limit (1,000 where it is not known). */
export function maxConnectionsOf(configured: number | undefined, openFiles: number | undefined): number {
  if (configured !== undefined) return configured;
  return openFiles === undefined ? fallbackMaxConnections : Math.max(1, Math.floor(openFiles / openFilesShare));
}

/**
 * The address a client is counted under: IPv4 (also when IPv4-mapped), or an IPv6 address's /64,
 * since one host is usually given a whole /64 and can pick any address in it.
 */
export function addressGroup(address: string): string {
  const mapped = /^::ffff:(.+)$/i.exec(address)?.[1];
  if (mapped !== undefined && isIPv4(mapped)) return mapped;
  if (!isIPv6(address)) return address;
  const [head = '', tail] = address.replace(/%.*$/, '').split('::');
  const split = (part: string | undefined) => (part ? part.split(':') : []);
  // An IPv4 tail (a.b.c.d) stands for two groups; '::' for as many zero groups as the address lacks.
  const width = (groups: string[]) => groups.reduce((n, g) => n + (g.includes('.') ? 2 : 1), 0);
  const [headGroups, tailGroups] = [split(head), split(tail)];
  const groups = tail === undefined ? headGroups : [...headGroups, ...Array<string>(8 - width(headGroups) - width(tailGroups)).fill('0'), ...tailGroups];
  return `${groups.slice(0, 4).map((g) => parseInt(g, 16).toString(16)).join(':')}::/64`;
}

/**
 * Why a connection was closed at once: the cap on all connections (none waiting to evict), the one
 * on its address, or, for a connection still waiting for its first request, a newer one that needed
 * its place (see WaitingConnections).
 */
export type Refusal = 'max_connections' | 'max_per_address' | 'evicted_waiting';

export interface ConnectionCaps {
  maxConnections: number;
  maxPerAddress: number;
}

/**
 * Counts open connections, in all and per client address, and says whether one more may open.
 * Loopback is not capped per address (a reverse proxy on this host connects from it for all its
 * clients; its own limits apply per client) and may go `loopbackReserve` beyond the total cap.
 */
export class ConnectionCounter {
  private total = 0;
  private readonly perAddress = new Map<string, number>();

  readonly caps: ConnectionCaps;

  constructor(caps: ConnectionCaps) {
    this.caps = caps;
  }

  get open(): number {
    return this.total;
  }

  /** Counts a connection from `address` and returns undefined, or returns why it may not open (not counted). */
  admit(address: string): Refusal | undefined {
    const group = addressGroup(address);
    const fromGroup = this.perAddress.get(group) ?? 0;
    if (isLoopback(address)) {
      if (this.total >= this.caps.maxConnections + loopbackReserve) return 'max_connections';
    } else {
      if (this.total >= this.caps.maxConnections) return 'max_connections';
      if (fromGroup >= this.caps.maxPerAddress) return 'max_per_address';
    }
    this.total++;
    this.perAddress.set(group, fromGroup + 1);
    return undefined;
  }

  /** A connection `admit` counted has closed. */
  release(address: string): void {
    this.total--;
    const group = addressGroup(address);
    const left = (this.perAddress.get(group) ?? 1) - 1;
    if (left > 0) this.perAddress.set(group, left);
    else this.perAddress.delete(group);
  }
}

/**
 * The connections that have not sent a whole request yet, oldest first. When the port is full, the
 * oldest of them makes room for a new connection: a flood of idle sockets then holds no place a
 * client that asks for something needs (the operator's /health on loopback included), and is cut
 * down at the pace of new connections rather than only by the headers timeout. A connection that has
 * been served once (kept alive between requests) is never evicted.
 */
export class WaitingConnections<S> {
  private readonly waiting = new Set<S>();

  add(connection: S): void {
    this.waiting.add(connection);
  }

  /** Its first request came whole (or it closed): it is no longer evictable. */
  served(connection: S): void {
    this.waiting.delete(connection);
  }

  /** The oldest waiting connection, taken out of the set for the caller to close; undefined when none waits. */
  takeOldest(): S | undefined {
    const oldest = this.waiting.values().next();
    if (oldest.done) return undefined;
    this.waiting.delete(oldest.value);
    return oldest.value;
  }
}

/** After this long without a refusal (ms), a burst of refusals is over and its count is logged. */
const burstQuietMs = 10_000;

/** One warning when refusals start and one line with their count when they stop, not one per socket. */
export class RefusalBurst {
  private refused = 0;
  private quiet: NodeJS.Timeout | undefined;
  private readonly log: Logger;
  private readonly caps: ConnectionCaps;

  constructor(log: Logger, caps: ConnectionCaps) {
    this.log = log;
    this.caps = caps;
  }

  add(reason: Refusal, address: string, open: number): void {
    this.refused++;
    if (this.quiet) return void this.quiet.refresh();
    this.log.warn({ reason, address, open, ...this.caps }, 'refusing connections at a cap (HTTP_MAX_CONNECTIONS, HTTP_MAX_CONNECTIONS_PER_ADDRESS); one line when it stops');
    this.quiet = setTimeout(() => this.end(), burstQuietMs).unref();
  }

  end(): void {
    if (!this.quiet) return;
    clearTimeout(this.quiet);
    this.quiet = undefined;
    this.log.warn({ refused: this.refused }, `refusing connections stopped: none for ${burstQuietMs / 1000} s`);
    this.refused = 0;
  }
}

/** What the port's connections did: read by /metrics. */
export interface ConnectionStats {
  open(): number;
  refused: Record<Refusal, number>;
  /** Connections closed because no complete request came within HTTP_HEADERS_TIMEOUT_MS or HTTP_REQUEST_TIMEOUT_MS. */
  timedOut: number;
}

/**
 * Refuses (closes at once) each connection past a cap, counts what it refused and what timed out,
 * and exports the counts to `metrics` when given. Call `countTimeout` where the server's
 * `clientError` handler meets ERR_HTTP_REQUEST_TIMEOUT.
 */
export function limitConnections(server: Server, config: HttpLimitsConfig, log: Logger, metrics?: Metrics): ConnectionStats & { countTimeout(): void } {
  const counter = new ConnectionCounter({ maxConnections: maxConnectionsOf(config.HTTP_MAX_CONNECTIONS, processOpenFileLimit()), maxPerAddress: config.HTTP_MAX_CONNECTIONS_PER_ADDRESS });
  const burst = new RefusalBurst(log, counter.caps);
  const stats = { open: () => counter.open, refused: { max_connections: 0, max_per_address: 0, evicted_waiting: 0 }, timedOut: 0, countTimeout: () => void stats.timedOut++ };
  const waiting = new WaitingConnections<Socket>();
  /** Each admitted socket's address, until its place is given back (once: at its close, or when evicted). */
  const placeOf = new Map<Socket, string>();
  const release = (socket: Socket) => {
    const address = placeOf.get(socket);
    if (address === undefined) return;
    placeOf.delete(socket);
    waiting.served(socket);
    counter.release(address);
  };
  const close = (socket: Socket, reason: Refusal, address: string) => {
    stats.refused[reason]++;
    burst.add(reason, address, counter.open);
    socket.destroy();
  };
  server.on('connection', (socket: Socket) => {
    // Undefined once the peer has gone already: counted like any address until its close.
    const address = socket.remoteAddress ?? '';
    let refusal = counter.admit(address);
    // The port is full: the oldest connection still waiting for its first request makes room.
    const evicted = refusal === 'max_connections' ? waiting.takeOldest() : undefined;
    if (evicted) {
      const evictedAddress = placeOf.get(evicted) ?? '';
      release(evicted);
      close(evicted, 'evicted_waiting', evictedAddress);
      refusal = counter.admit(address);
    }
    if (refusal !== undefined) return close(socket, refusal, address);
    placeOf.set(socket, address);
    waiting.add(socket);
    socket.once('close', () => release(socket));
  });
  // A request whole (or a websocket's upgrade): the connection is in use, not to be evicted.
  server.on('request', (req: { socket: Socket }) => waiting.served(req.socket));
  server.on('upgrade', (req: { socket: Socket }) => waiting.served(req.socket));
  server.once('close', () => burst.end());
  if (metrics) exportConnectionStats(metrics, stats);
  return stats;
}

function exportConnectionStats(metrics: Metrics, stats: ConnectionStats): void {
  sampledGauge(metrics, { name: 'mds_http_connections_open', help: 'Open connections to the HTTP port.', labelNames: [], read: () => [{ labels: {}, value: stats.open() }] });
  sampledCounter(metrics, {
    name: 'mds_http_connections_refused_total',
    help: 'Connections closed at once because a cap was reached: max_connections (HTTP_MAX_CONNECTIONS, none waiting to evict), max_per_address (HTTP_MAX_CONNECTIONS_PER_ADDRESS), or evicted_waiting (the oldest connection still waiting for its first request, closed to make room for a new one).',
    labelNames: ['reason'],
    read: () => Object.entries(stats.refused).map(([reason, value]) => ({ labels: { reason }, value })),
  });
  sampledCounter(metrics, {
    name: 'mds_http_connections_timed_out_total',
    help: 'Connections closed because no complete request came within HTTP_HEADERS_TIMEOUT_MS (an idle connection) or HTTP_REQUEST_TIMEOUT_MS.',
    labelNames: [],
    read: () => [{ labels: {}, value: stats.timedOut }],
  });
}
