import WebSocket from 'ws';
import type { Logger } from '../infra/log.ts';

export interface ConnectionOptions {
  /** For logs, e.g. the venue id. */
  name: string;
  url: string;
  log: Logger;
  /** Messages to send after every (re)connect, already cut into the venue's allowed batches. */
  subscribeMessages: () => string[];
  /** No message and no ping for this long means a dead socket, not a quiet market. */
  staleAfterMs: number;
  backoff?: { baseMs: number; maxMs: number };
  onOpen?: () => void;
  onMessage: (text: string, receivedAt: number) => void;
}

export interface ConnectionMetrics {
  connected: boolean;
  connects: number;
  reconnects: number;
  messages: number;
  lastMessageAt: number | undefined;
}

/**
 * One venue websocket, kept open: connect, subscribe, watchdog, reconnect with jittered
 * exponential backoff, resubscribe. Written once for every venue; a venue only supplies its URL,
 * its subscribe messages and what to do with a message.
 */
export class VenueConnection {
  readonly #options: ConnectionOptions;
  #socket: WebSocket | undefined;
  #closed = false;
  #attempt = 0;
  #lastActivity = 0;
  #watchdog: NodeJS.Timeout | undefined;
  #retry: NodeJS.Timeout | undefined;
  readonly metrics: ConnectionMetrics = { connected: false, connects: 0, reconnects: 0, messages: 0, lastMessageAt: undefined };

  constructor(options: ConnectionOptions) {
    this.#options = options;
  }

  start(): void {
    this.#connect();
    const tick = Math.max(250, Math.floor(this.#options.staleAfterMs / 4));
    this.#watchdog = setInterval(() => {
      const socket = this.#socket;
      if (socket?.readyState === WebSocket.OPEN && Date.now() - this.#lastActivity > this.#options.staleAfterMs) {
        this.#options.log.warn({ reason: 'stale', silentMs: Date.now() - this.#lastActivity }, 'no data: reconnecting');
        socket.terminate();
      }
    }, tick);
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearInterval(this.#watchdog);
    clearTimeout(this.#retry);
    const socket = this.#socket;
    if (!socket || socket.readyState === WebSocket.CLOSED) return;
    await new Promise<void>((resolve) => {
      socket.once('close', () => resolve());
      socket.close();
      setTimeout(() => {
        socket.terminate();
        resolve();
      }, 1_000).unref();
    });
  }

  #connect(): void {
    const { url, log } = this.#options;
    const socket = new WebSocket(url, { handshakeTimeout: 10_000 });
    this.#socket = socket;
    socket.on('open', () => {
      this.#attempt = 0;
      this.#lastActivity = Date.now();
      this.metrics.connected = true;
      this.metrics.connects += 1;
      this.#options.onOpen?.();
      for (const message of this.#options.subscribeMessages()) socket.send(message);
      log.info({ url }, 'connected');
    });
    socket.on('ping', () => (this.#lastActivity = Date.now()));
    socket.on('message', (data) => {
      const now = Date.now();
      this.#lastActivity = now;
      this.metrics.messages += 1;
      this.metrics.lastMessageAt = now;
      this.#options.onMessage(data.toString(), now);
    });
    socket.on('error', (err) => log.warn({ err: err.message }, 'websocket error'));
    socket.on('close', (code, reason) => {
      this.metrics.connected = false;
      if (this.#closed) return;
      const { baseMs, maxMs } = this.#options.backoff ?? { baseMs: 500, maxMs: 30_000 };
      // Full jitter: spreads the reconnects of many collectors after a venue outage.
      const delay = Math.random() * Math.min(maxMs, baseMs * 2 ** this.#attempt);
      this.#attempt += 1;
      this.metrics.reconnects += 1;
      log.warn({ reason: 'closed', code, detail: reason.toString(), retryInMs: Math.round(delay) }, 'disconnected: reconnecting');
      this.#retry = setTimeout(() => this.#connect(), delay);
    });
  }
}
