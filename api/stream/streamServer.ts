import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import type { RequestHandler } from 'express';
import { WebSocketServer, type RawData, type WebSocket } from 'ws';
import type { Config } from '../../infra/config.ts';
import type { Logger } from '../../infra/log.ts';
import type { StoreCalls } from '../../infra/store.ts';
import { apiKeyOf, authenticate, keysUnavailable, presentedKey } from '../auth.ts';
import { ApiError } from '../errors.ts';
import type { KeyStore, VerifiedKey } from '../keys.ts';
import type { Quota } from '../quota.ts';
import { writeRawError } from '../rawError.ts';
import { closeCodes, StreamConnection, StreamHub } from './hub.ts';
import { parseClientMessage, topicsOf, type ClientRequest } from './protocol.ts';
import { startPolls } from './storePolls.ts';
import { StreamTokens } from './streamTokens.ts';
import type { TradeSource } from './tradeFeed.ts';

export const streamPath = '/v1/stream';
/** A ping every this often; a connection that has not answered the previous one by then is cut. */
const pingEveryMs = 30_000;
/** Largest client message: a subscribe naming the most ids allowed is about 6 kB. */
const maxClientMessageBytes = 64 * 1024;

export type StreamConfig = Pick<
  Config,
  'INDEX_STALE_AFTER_MS' | 'STORE_MIN_FREE_MB' | 'STREAM_MAX_CONNECTIONS_PER_KEY' | 'STREAM_MAX_SUBSCRIPTIONS_PER_CONNECTION' | 'STREAM_MAX_BUFFERED_BYTES'
>;

export interface StreamDeps {
  store: StoreCalls;
  keys: KeyStore;
  quota: Quota;
  /** What the trades channel sends; without one (an API alone on the in-process bus) it has nothing to send. */
  trades?: TradeSource;
  config: StreamConfig;
  log: Logger;
}

export interface StreamServer {
  /** POST /v1/stream/token, mounted behind requireKey and the quota: a token for `?token=`. */
  tokenHandler: RequestHandler;
  /** Takes over the HTTP server's WebSocket upgrades. */
  attach(server: Server): void;
  /** Closes every connection (1001 going away) and stops the feeds. */
  close(): Promise<void>;
}

/**
 * GET /v1/stream: the live stream (api/asyncapi.json). The key comes as on any request (header),
 * or as a token from POST /v1/stream/token (`?token=`, for browsers). Opening a connection and
 * each subscribe message that adds a subscription count one request of the key's quota (one that
 * names only what the connection holds is answered `subscribed` for free); a key holds at most
 * STREAM_MAX_CONNECTIONS_PER_KEY connections on this replica, each at most
 * STREAM_MAX_SUBSCRIPTIONS_PER_CONNECTION subscriptions.
 */
export async function startStream(deps: StreamDeps): Promise<StreamServer> {
  const { keys, quota, config, log } = deps;
  const hub = new StreamHub({ maxBufferedBytes: config.STREAM_MAX_BUFFERED_BYTES, log });
  const tokens = new StreamTokens(keys);
  const wss = new WebSocketServer({ noServer: true, maxPayload: maxClientMessageBytes });
  const trades = await deps.trades?.(
    (events) => hub.publishTrades(events),
    () => hub.subscribedAssets('trades'),
  );
  const polls = startPolls({ store: deps.store, hub, config, log });

  /** The key of an upgrade request: its token, else its header; throws ApiError. */
  function keyOf(req: IncomingMessage, url: URL): VerifiedKey {
    const token = url.searchParams.get('token');
    if (token === null) return authenticate(keys, presentedKey(req));
    let key: VerifiedKey | undefined;
    try {
      key = tokens.verify(token);
    } catch (err) {
      throw keysUnavailable(err);
    }
    if (!key) throw new ApiError(401, 'invalid_key', 'the stream token is malformed, expired or its key revoked: get a new one from POST /v1/stream/token');
    return key;
  }

  async function upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (url.pathname !== streamPath) throw new ApiError(404, 'not_found', `no WebSocket endpoint at ${url.pathname}; the stream is ${streamPath}`);
    const key = keyOf(req, url);
    if (!hub.reserve(key.keyHash, config.STREAM_MAX_CONNECTIONS_PER_KEY)) {
      throw new ApiError(429, 'quota_exceeded', `a key holds at most ${config.STREAM_MAX_CONNECTIONS_PER_KEY} stream connections at once (per API replica): close one first`);
    }
    try {
      await quota.consume(key.keyHash);
    } catch (err) {
      hub.release(key.keyHash);
      throw err;
    }
    // The client may have left during the quota check; ws answers a malformed handshake itself
    // (400) without calling back: either way the slot goes back once the socket is gone.
    if (socket.destroyed) return hub.release(key.keyHash);
    let opened = false;
    socket.once('close', () => opened || hub.release(key.keyHash));
    wss.handleUpgrade(req, socket, head, (ws) => {
      opened = true;
      open(ws, key);
    });
  }

  function open(ws: WebSocket, key: VerifiedKey): void {
    const connection = new StreamConnection(ws, key);
    hub.add(connection);
    ws.on('pong', () => (connection.alive = true));
    ws.on('message', (data: RawData, isBinary: boolean) => {
      connection.alive = true;
      connection.queue = connection.queue.then(() => answer(connection, data, isBinary));
    });
    ws.on('close', () => hub.remove(connection));
    ws.on('error', (err) => log.debug({ err, keyPrefix: key.prefix }, 'stream connection failed'));
  }

  async function answer(connection: StreamConnection, data: RawData, isBinary: boolean): Promise<void> {
    try {
      if (isBinary) throw new ApiError(400, 'bad_request', 'send text messages (JSON), not binary ones');
      const request = parseClientMessage(data.toString());
      await handle(connection, request);
    } catch (err) {
      if (err instanceof ApiError) return hub.send(connection, { op: 'error', ...err.body() });
      log.error({ err }, 'stream message failed');
    }
  }

  async function handle(connection: StreamConnection, request: ClientRequest): Promise<void> {
    if (request.op === 'ping') return hub.send(connection, { op: 'pong', at: Date.now() });
    const topics = topicsOf(request);
    const echoed = { channel: request.channel, ids: request.ids, ...(request.interval ? { interval: request.interval } : {}) };
    if (request.op === 'unsubscribe') return hub.send(connection, { op: 'unsubscribed', request: echoed, subscriptions: hub.unsubscribe(connection, topics) });
    // Refused over the limit before it costs a request of the quota; one that adds nothing the
    // connection does not hold already changes nothing, and costs nothing.
    const max = config.STREAM_MAX_SUBSCRIPTIONS_PER_CONNECTION;
    const added = hub.assertRoom(connection, topics, max);
    if (added.length === 0) return hub.send(connection, { op: 'subscribed', request: echoed, subscriptions: connection.topics.size });
    await quota.consume(connection.key.keyHash);
    // The connection may have closed meanwhile: subscribing it would leave it in the hub.
    if (!hub.connections.has(connection)) return;
    hub.send(connection, { op: 'subscribed', request: echoed, subscriptions: hub.subscribe(connection, topics, max) });
  }

  // Dead peers are cut, revoked keys closed.
  const heartbeat = setInterval(() => {
    for (const connection of hub.connections) {
      if (!connection.alive) {
        hub.remove(connection);
        connection.ws.terminate();
        continue;
      }
      connection.alive = false;
      connection.ws.ping();
      let revoked = false;
      try {
        revoked = !keys.isValid(connection.key);
      } catch {
        // The keys cannot be told right now: keep the connection until they can.
      }
      if (revoked) hub.close(connection, closeCodes.keyRevoked, 'the API key was revoked');
    }
  }, pingEveryMs).unref();

  return {
    tokenHandler: (_req, res) => {
      res.set('Cache-Control', 'no-store').json(tokens.issue(apiKeyOf(res)));
    },
    attach(server) {
      server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
        upgrade(req, socket, head).catch((err: unknown) => {
          if (err instanceof ApiError) return writeRawError(socket, err);
          log.error({ err }, 'stream upgrade failed');
          writeRawError(socket, new ApiError(500, 'internal', 'internal error'));
        });
      });
    },
    async close() {
      clearInterval(heartbeat);
      for (const connection of [...hub.connections]) hub.close(connection, 1001, 'the server is shutting down');
      await Promise.all([polls.stop(), trades?.stop()]);
      for (const client of wss.clients) client.terminate();
      wss.close();
    },
  };
}
