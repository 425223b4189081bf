import WebSocket from 'ws';
import type { Logger } from '../infra/log.ts';
import type { ConnectTurn } from './connectBudget.ts';
import type { KeepAlive, ResolvedEndpoint } from './venue.ts';
import { backoffDelayMs, sharedTuningDefaults } from './collectorKit.ts';

export interface ConnectionOptions {
  url: string;
  /** Asked before every (re)connect when set, replacing `url`; a failure is retried with the backoff. */
  resolve?: () => Promise<ResolvedEndpoint>;
  /** Waited for before every (re)connect when set: the venue's connection budget (connectBudget.ts). */
  admit?: () => Promise<ConnectTurn>;
  /** Carries the venue in its bindings: every reconnect is logged with the venue and the reason. */
  log: Logger;
  /** Messages to send after every (re)connect, already cut into the venue's allowed batches. */
  subscribeMessages: () => string[];
  keepAlive: KeepAlive;
  /** Messages we may send per second; subscriptions and pings are queued to stay under it. */
  sendsPerSecond: number;
  /** Open a fresh socket after this long, before the venue's own connection lifetime runs out. */
  rotateAfterMs?: number;
  /** How long the old socket stays open after its replacement opened, so no message falls between them. */
  overlapMs?: number;
  backoff?: { baseMs: number; maxMs: number };
  /**
   * Whether the venue streams to us: true when a socket delivers its first message while none did
   * (at start, after a reconnect); false when the last such socket closes, and again at each failed
   * attempt while none is open. A rotation's overlap keeps it true. Not called once `close` began.
   */
  onStatus?: (connected: boolean) => void;
  /** A socket opened; every message it delivers carries this `generation`. */
  onOpen?: (generation: number) => void;
  /** Once `close` began, called only for what arrives within `closeReadGraceMs`. */
  onMessage: (text: string, receivedAt: number, generation: number) => void;
  /** How long after `close` began messages are still read (default 1 s, the close handshake's own bound). */
  closeReadGraceMs?: number;
}

const defaultCloseReadGraceMs = 1_000;

export interface ConnectionMetrics {
  connected: boolean;
  connects: number;
  /** Unplanned: the socket closed or went stale. */
  reconnects: number;
  /** Planned: lifetime limit or a venue's reconnect request, with overlap. */
  rotations: number;
  messages: number;
  lastMessageAt: number | undefined;
}

interface Live {
  socket: WebSocket;
  generation: number;
  open: boolean;
  retiring: boolean;
  lastActivity: number;
  gotMessage: boolean;
  queue: string[];
  nextSendAt: number;
  drainTimer: NodeJS.Timeout | undefined;
  rotateTimer: NodeJS.Timeout | undefined;
  pingEveryMs: number;
  pingTimer: NodeJS.Timeout | undefined;
}

/**
 * One venue websocket, kept open: connect, subscribe at the venue's message rate, keep alive,
 * watchdog, reconnect with jittered exponential backoff and resubscribe, planned rotation with
 * overlap. Written once for every venue: a venue only supplies its URL, messages and timings.
 */
export class VenueConnection {
  readonly #options: ConnectionOptions;
  readonly #live = new Set<Live>();
  #current: Live | undefined;
  #generation = 0;
  #closed = false;
  /** Once closing: unix ms after which the sockets' messages are no longer read. */
  #readUntil = 0;
  #attempt = 0;
  #timers: NodeJS.Timeout[] = [];
  #retry: NodeJS.Timeout | undefined;
  /** An attempt is under way (its turn in the venue's connection limit, then `resolve`): the next socket is coming. */
  #resolving = false;
  /** What onStatus last said. */
  #streaming = false;
  readonly metrics: ConnectionMetrics = { connected: false, connects: 0, reconnects: 0, rotations: 0, messages: 0, lastMessageAt: undefined };

  constructor(options: ConnectionOptions) {
    this.#options = options;
  }

  /** True while an old socket and its replacement are both open: the same message may arrive twice. */
  get overlapping(): boolean {
    return this.#live.size > 1;
  }

  /** The generation of the newest socket. */
  get generation(): number {
    return this.#generation;
  }

  start(): void {
    const { keepAlive } = this.#options;
    this.#connect();
    this.#timers.push(setInterval(() => this.#watch(), Math.max(100, Math.min(1_000, Math.floor(keepAlive.staleAfterMs / 4)))));
  }

  /** Sends on the newest open socket, after what is already queued. */
  send(messages: readonly string[]): void {
    const live = this.#current;
    if (!live?.open) return;
    live.queue.push(...messages);
    this.#drain(live);
  }

  /** Replaces the socket by a fresh one; the old one closes once the new one has been open for the overlap. */
  rotate(reason: string): void {
    if (this.#closed || this.overlapping || this.#resolving || !this.#current?.open) return;
    this.#current.retiring = true;
    this.metrics.rotations += 1;
    this.#options.log.info({ reason, generation: this.#current.generation }, 'rotating connection');
    this.#connect();
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.#readUntil = Date.now() + (this.#options.closeReadGraceMs ?? defaultCloseReadGraceMs);
    for (const t of this.#timers) clearInterval(t);
    clearTimeout(this.#retry);
    await Promise.all([...this.#live].map((live) => this.#shut(live)));
  }

  #shut(live: Live): Promise<void> {
    clearTimeout(live.drainTimer);
    clearTimeout(live.rotateTimer);
    clearInterval(live.pingTimer);
    const { socket } = live;
    if (socket.readyState === WebSocket.CLOSED) return Promise.resolve();
    return new Promise<void>((resolve) => {
      socket.once('close', () => resolve());
      socket.close();
      setTimeout(() => {
        socket.terminate();
        resolve();
      }, 1_000).unref();
    });
  }

  #connect(): void {
    const { resolve, admit, log } = this.#options;
    if (!resolve && !admit) return this.#open({ url: this.#options.url });
    // One attempt at a time: its turn and endpoint open the socket, or a failure schedules the next try.
    if (this.#resolving) return;
    this.#resolving = true;
    let turn: ConnectTurn | undefined;
    const attempt = async (): Promise<ResolvedEndpoint> => {
      turn = await admit?.();
      if (turn && turn.waitedMs >= 1_000) log.info({ waitedMs: turn.waitedMs }, "connecting after a wait for the venue's connection limit");
      return resolve ? resolve() : { url: this.#options.url };
    };
    attempt().then(
      (endpoint) => {
        this.#resolving = false;
        if (this.#closed) turn?.giveBack();
        else this.#open(endpoint, turn);
      },
      (err: Error) => {
        this.#resolving = false;
        turn?.giveBack();
        log.warn({ reason: 'endpoint', err: err.message }, 'connect failed');
        this.#attemptFailed();
        this.#retryLater();
      },
    );
  }

  /** A socket closed or could not be had: says so unless another socket still streams. */
  #attemptFailed(): void {
    if (this.#closed || [...this.#live].some((l) => l.open && l.gotMessage)) return;
    this.#streaming = false;
    this.#options.onStatus?.(false);
  }

  /** The next attempt after jittered exponential backoff. */
  #retryLater(): number {
    if (this.#closed) return 0;
    clearTimeout(this.#retry);
    const delay = backoffDelayMs(this.#options.backoff ?? sharedTuningDefaults.backoff, this.#attempt);
    this.#attempt += 1;
    this.#retry = setTimeout(() => this.#connect(), delay);
    return delay;
  }

  /** Opens a socket; `turn`, its place in the venue's connection budget, is given back if the venue never answered it. */
  #open({ url, pingEveryMs }: ResolvedEndpoint, turn?: ConnectTurn): void {
    const { log } = this.#options;
    const generation = ++this.#generation;
    const live: Live = {
      socket: new WebSocket(url, { handshakeTimeout: 10_000 }),
      generation,
      open: false,
      retiring: false,
      lastActivity: Date.now(),
      gotMessage: false,
      queue: [],
      nextSendAt: 0,
      drainTimer: undefined,
      rotateTimer: undefined,
      pingEveryMs: pingEveryMs ?? this.#options.keepAlive.pingEveryMs,
      pingTimer: undefined,
    };
    this.#live.add(live);
    this.#current = live;
    const { socket } = live;
    socket.on('open', () => {
      live.open = true;
      live.lastActivity = Date.now();
      this.metrics.connected = true;
      this.metrics.connects += 1;
      this.#options.onOpen?.(generation);
      live.queue.push(...this.#options.subscribeMessages());
      this.#drain(live);
      live.pingTimer = setInterval(() => this.#ping(live), live.pingEveryMs);
      // Without the query: KuCoin's carries the connection token.
      log.info({ url: url.split('?')[0], generation }, 'connected');
      const { rotateAfterMs, overlapMs = 5_000 } = this.#options;
      if (rotateAfterMs) live.rotateTimer = setTimeout(() => this.rotate('connection lifetime'), rotateAfterMs);
      for (const old of this.#live) {
        if (old !== live && old.retiring) setTimeout(() => void this.#shut(old), overlapMs).unref();
      }
    });
    const alive = () => (live.lastActivity = Date.now());
    socket.on('ping', alive);
    socket.on('pong', alive);
    socket.on('message', (data) => {
      // Once closing, what arrives within the grace is still read (the venue's last frames before it
      // answers our close); after it, nothing: a reader far behind would otherwise parse its whole
      // backlog before the close completes (the 2,000-asset demo's stop took 12 s). The trades left
      // are missed trades, recovered at the next start from the last stored one.
      const now = Date.now();
      if (this.#closed && now > this.#readUntil) return;
      live.lastActivity = now;
      if (!live.gotMessage) {
        live.gotMessage = true;
        this.#attempt = 0;
        if (!this.#streaming) {
          this.#streaming = true;
          this.#options.onStatus?.(true);
        }
      }
      this.metrics.messages += 1;
      this.metrics.lastMessageAt = now;
      this.#options.onMessage(data.toString(), now, generation);
    });
    // The venue counted the connection if it took it, or refused it itself (a 429 or another 4xx,
    // which ws reports as "Unexpected server response: <status>"); one refused or unreachable, or
    // answered 5xx (the venue down), it is not taken to have counted.
    let venueAnswered = false;
    socket.on('upgrade', () => (venueAnswered = true));
    socket.on('error', (err) => {
      const status = /^Unexpected server response: (\d+)/.exec(err.message)?.[1];
      if (status !== undefined && Number(status) < 500) venueAnswered = true;
      log.warn({ err: err.message, generation }, 'websocket error');
    });
    socket.on('close', (code, reason) => {
      if (!venueAnswered) turn?.giveBack();
      clearTimeout(live.drainTimer);
      clearTimeout(live.rotateTimer);
      clearInterval(live.pingTimer);
      this.#live.delete(live);
      this.metrics.connected = [...this.#live].some((l) => l.open);
      if (!this.#closed && (this.#streaming || live === this.#current)) this.#attemptFailed();
      // A retired socket, or one replaced while it was dying: its successor is already there.
      if (this.#closed || live !== this.#current) return;
      this.metrics.reconnects += 1;
      const delay = this.#retryLater();
      log.warn({ reason: 'closed', code, detail: reason.toString(), generation, retryInMs: Math.round(delay) }, 'disconnected: reconnecting');
    });
  }

  /** Sends queued messages no faster than the venue allows. */
  #drain(live: Live): void {
    clearTimeout(live.drainTimer);
    live.drainTimer = undefined;
    const interval = 1_000 / this.#options.sendsPerSecond;
    while (live.queue.length > 0 && live.socket.readyState === WebSocket.OPEN) {
      const now = Date.now();
      if (now < live.nextSendAt) {
        live.drainTimer = setTimeout(() => this.#drain(live), live.nextSendAt - now);
        return;
      }
      live.socket.send(live.queue.shift()!);
      live.nextSendAt = Math.max(now, live.nextSendAt) + interval;
    }
  }

  #ping(live: Live): void {
    const { message } = this.#options.keepAlive;
    if (!live.open || live.socket.readyState !== WebSocket.OPEN) return;
    if (message === undefined) live.socket.ping();
    else {
      // Ahead of queued subscriptions: a venue that misses its ping closes the socket.
      live.queue.unshift(message);
      this.#drain(live);
    }
  }

  #watch(): void {
    const { staleAfterMs } = this.#options.keepAlive;
    const now = Date.now();
    for (const live of this.#live) {
      const silentMs = now - live.lastActivity;
      if (silentMs <= staleAfterMs || live.socket.readyState === WebSocket.CLOSED) continue;
      this.#options.log.warn({ reason: live.open ? 'stale' : 'connect timeout', silentMs, generation: live.generation }, 'no data: reconnecting');
      // Counted as a reconnect by the close handler, which also schedules the new socket.
      live.socket.terminate();
    }
  }
}
