// The part every simulated venue shares: an HTTP + websocket server on loopback, per-client
// subscriptions, the venue's latency, and the faults a test or an operator injects on command
// (drop sockets, stall the feed, an outage, garbage frames, a skipped sequence number, a venue
// reconnect request). The protocol of each venue lives in its own file beside this one.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import { z } from 'zod';
import { parseJson } from '../ingest/venue.ts';
import type { MarketStep, SimLiquidation, SimMarket, SimTrade, VenueListing } from './market.ts';
import { PrintedTrades } from './printedTrades.ts';
import { SentHistory } from './sentHistory.ts';

export interface SimClient {
  socket: WebSocket;
  url: URL;
  openedAt: number;
  /** Topics in the venue's own naming (btcusdt@trade, trades:BTC-USDT...). */
  topics: Set<string>;
  /** Connection-wide message counter, for venues that number their messages (Coinbase). */
  sequence: number;
}

/** What a venue protocol file implements; the server calls it. */
export interface VenueProtocol {
  /** A REST request: the status and JSON body to answer (a string body goes as plain text), undefined for 404. */
  rest(url: URL): { status: number; body: unknown } | undefined;
  /** Optional greeting or setup when a socket opens (some venues send one). */
  open?(client: SimClient): void;
  /** A text frame from the client. */
  message(client: SimClient, text: string): void;
  /** Once per simulator tick, before the markets (heartbeats). */
  tick?(now: number): void;
  /** One model step of one market: send its trades, liquidations and book change to subscribers. */
  publish(market: SimMarket, step: MarketStep, now: number): void;
  /** The venue's notice that it is about to close connections (when it sends one). */
  reconnectNotice?(): unknown;
  /** The trade id a collector stores for `trade`, for a venue that sends none (default: String(trade.id)). */
  storedTradeId?(trade: SimTrade): string;
}

/** A trade as it went out, with the identity a collector stores it under. */
export interface SentTrade {
  /**
   * The listing's venue id: a native collector's venue id. A ccxt collector's id may extend the
   * ccxt exchange id the ccxt simulators list under (woo -> woo-swap, lighter -> lighter-swap).
   */
  venue: string;
  /** The venue's market symbol: `market` of the stored trade. */
  market: string;
  /** `trade_id` of the stored trade. */
  tradeId: string;
  trade: SimTrade;
}

export interface VenueServerOptions {
  /** Added to every message the venue sends (ms). */
  latencyMs?: number;
  /** Closes sockets older than this, as venues with a connection lifetime do (ms). */
  maxConnectionMs?: number;
  /** Time between a reconnect notice and the close of every socket (ms). */
  reconnectGraceMs?: number;
  /** Venues that ping their clients (Binance: a websocket ping every 20 s). */
  pingEveryMs?: number;
  /** Sent trades (and liquidations) kept for `recent()` / `since()`; all are counted (default 10,000). */
  retainSent?: number;
  /** Printed trades kept per market: what the venue's REST trade history reaches back to (default 20,000). */
  retainPrinted?: number;
  /** And only those printed within this time before the market's newest (ms; default: whatever their age). */
  retainPrintedMs?: number;
}

const defaultRetainSent = 10_000;
const defaultRetainPrinted = 20_000;

export const faultRequest = z.discriminatedUnion('fault', [
  z.object({ fault: z.literal('drop') }),
  z.object({ fault: z.literal('stall'), ms: z.number().int().positive() }),
  z.object({ fault: z.literal('outage'), ms: z.number().int().positive() }),
  z.object({ fault: z.literal('garbage') }),
  z.object({ fault: z.literal('gap'), symbol: z.string() }),
  z.object({ fault: z.literal('reconnect') }),
]);
export type FaultRequest = z.infer<typeof faultRequest>;

export interface VenueFaults {
  /** Closes every client socket abruptly. */
  dropConnections(): void;
  /** Sends nothing (data, heartbeats, pongs) for `ms` while keeping sockets open. */
  stall(ms: number): void;
  /** Drops every socket and refuses connections and REST calls for `ms`. */
  outage(ms: number): void;
  /** Sends a frame that is not JSON to every client. */
  garbage(): void;
  /** The next book update of this market is not sent: subscribers see a sequence gap. */
  skipSequence(symbol: string): void;
  /** Sends the venue's reconnect notice, then closes every socket after the grace period. */
  requestReconnect(): void;
}

/** Hooks a protocol file uses to reach its clients. */
export class SimVenueServer {
  readonly clients = new Set<SimClient>();
  /** Trades and liquidations sent to at least one subscriber, in order: the last few kept, all counted. */
  readonly trades: SentHistory<SimTrade>;
  /** Every trade the venue printed, sent or not (a socket down, an outage): its REST trade history. */
  readonly printed: PrintedTrades;
  readonly liquidations: SentHistory<SimLiquidation>;
  readonly listing: VenueListing;
  readonly #options: VenueServerOptions;
  readonly #tradeListeners = new Set<(sent: SentTrade) => void>();
  readonly #gaps = new Set<string>();
  #protocol: VenueProtocol | undefined;
  #stalledUntil = 0;
  /** Requests that arrived while stalled: a hung venue answers them late, not never. */
  #held: { client: SimClient; text: string }[] = [];
  #stallEnd: NodeJS.Timeout | undefined;
  #downUntil = 0;
  readonly #http = createServer((req, res) => this.#serveHttp(req, res));
  readonly #wss = new WebSocketServer({ noServer: true, autoPong: false });
  readonly #timers: NodeJS.Timeout[] = [];
  /** Each client's TCP socket under its websocket: corked while a tick writes. */
  readonly #wires = new Map<SimClient, Duplex>();
  #port = 0;

  constructor(listing: VenueListing, options: VenueServerOptions = {}) {
    this.listing = listing;
    this.#options = options;
    const retain = options.retainSent ?? defaultRetainSent;
    this.trades = new SentHistory<SimTrade>(retain, (trade) => this.#tradeSent(trade));
    this.liquidations = new SentHistory<SimLiquidation>(retain);
    this.printed = new PrintedTrades(options.retainPrinted ?? defaultRetainPrinted, options.retainPrintedMs);
    this.#http.on('upgrade', (req, socket, head) => {
      // A client that dies mid-handshake (a collector killed) resets its socket: not the venue's error.
      socket.on('error', () => socket.destroy());
      if (Date.now() < this.#downUntil) {
        socket.end('HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\n\r\n');
        return;
      }
      this.#wss.handleUpgrade(req, socket, head, (ws) => this.#onConnection(ws, req, socket));
    });
    if (options.pingEveryMs) {
      this.#timers.push(
        setInterval(() => {
          if (!this.stalled) for (const c of this.clients) c.socket.ping();
        }, options.pingEveryMs),
      );
    }
    if (options.maxConnectionMs) {
      const limit = options.maxConnectionMs;
      this.#timers.push(
        setInterval(() => {
          for (const c of this.clients) if (Date.now() - c.openedAt >= limit) c.socket.close(1000, 'connection lifetime reached');
        }, Math.max(50, Math.floor(limit / 20))),
      );
    }
  }

  set protocol(protocol: VenueProtocol) {
    this.#protocol = protocol;
  }

  get stalled(): boolean {
    return Date.now() < this.#stalledUntil;
  }

  get wsUrl(): string {
    return `ws://127.0.0.1:${this.#port}`;
  }

  get restUrl(): string {
    return `http://127.0.0.1:${this.#port}`;
  }

  async listen(port = 0): Promise<void> {
    this.#http.listen(port, '127.0.0.1');
    await new Promise<void>((resolve, reject) => {
      this.#http.once('listening', resolve);
      this.#http.once('error', reject);
    });
    this.#port = (this.#http.address() as AddressInfo).port;
  }

  /** Sends a message to one client after the venue's latency; nothing while stalled. */
  send(client: SimClient, message: unknown): boolean {
    if (this.stalled || client.socket.readyState !== client.socket.OPEN) return false;
    const text = typeof message === 'string' ? message : JSON.stringify(message);
    const latency = this.#options.latencyMs ?? 0;
    if (latency > 0) setTimeout(() => client.socket.readyState === client.socket.OPEN && client.socket.send(text), latency);
    else client.socket.send(text);
    return true;
  }

  /** Sends `message(client)` to every client subscribed to `topic`. Answers whether anyone got it. */
  publish(topic: string, message: (client: SimClient) => unknown): boolean {
    if (this.stalled) return false;
    let sent = false;
    for (const c of this.clients) if (c.topics.has(topic) && this.send(c, message(c))) sent = true;
    return sent;
  }

  /**
   * Calls `listener` with every trade as it is sent to at least one subscriber (SentTrade says
   * under which venue, market and trade id a collector stores it); nothing is kept for it.
   * Returns the function that removes the listener.
   */
  onTradeSent(listener: (sent: SentTrade) => void): () => void {
    this.#tradeListeners.add(listener);
    return () => void this.#tradeListeners.delete(listener);
  }

  /** As `onTradeSent`, for every trade printed, sent or not: what a complete history stores. */
  onTradePrinted(listener: (printed: SentTrade) => void): () => void {
    return this.printed.onPrinted((trade) => listener(this.#asStored(trade)));
  }

  /** A trade under the venue, market and trade id a collector stores it as. */
  #asStored(trade: SimTrade): SentTrade {
    return { venue: this.listing.venue, market: trade.symbol, tradeId: this.#protocol?.storedTradeId?.(trade) ?? String(trade.id), trade };
  }

  #tradeSent(trade: SimTrade): void {
    if (this.#tradeListeners.size === 0) return;
    const sent = this.#asStored(trade);
    for (const listener of this.#tradeListeners) listener(sent);
  }

  /** True once for a market after `skipSequence`: its next book update is to be dropped. */
  takeGap(symbol: string): boolean {
    return this.#gaps.delete(symbol);
  }

  /**
   * Runs one model step of every market that moves (`VenueListing.steps`) through the protocol. The
   * step's messages to each client go out in one write: corked, a socket buffers them and hands
   * them to the system at once when uncorked (a write per message was a tenth of the simulator's
   * thread on the 2,000-asset demo; test/bench/RESULTS.md).
   */
  tick(from: number, to: number): void {
    const protocol = this.#protocol;
    if (!protocol) return;
    const wires = [...this.#wires.values()];
    for (const wire of wires) wire.cork();
    try {
      protocol.tick?.(to);
      for (const [m, step] of this.listing.steps(from, to)) {
        this.printed.push(step.trades);
        protocol.publish(m, step, to);
      }
    } finally {
      for (const wire of wires) wire.uncork();
    }
  }

  readonly faults: VenueFaults = {
    dropConnections: () => {
      for (const c of this.clients) c.socket.terminate();
    },
    stall: (ms) => {
      this.#stalledUntil = Date.now() + ms;
      // One pending replay at a time (it replays everything held), so stalls on command pile up no timers.
      clearTimeout(this.#stallEnd);
      this.#stallEnd = setTimeout(() => {
        const held = this.#held;
        this.#held = [];
        for (const { client, text } of held) if (this.clients.has(client)) this.#protocol?.message(client, text);
      }, ms + 1);
    },
    outage: (ms) => {
      this.#downUntil = Date.now() + ms;
      for (const c of this.clients) c.socket.terminate();
    },
    garbage: () => {
      for (const c of this.clients) this.send(c, '\u0000{"not json');
    },
    skipSequence: (symbol) => void this.#gaps.add(symbol),
    requestReconnect: () => {
      const notice = this.#protocol?.reconnectNotice?.();
      const doomed = [...this.clients];
      if (notice !== undefined) for (const c of doomed) this.send(c, notice);
      setTimeout(() => doomed.forEach((c) => c.socket.close(1001, 'going away')), this.#options.reconnectGraceMs ?? 1_000);
    },
  };

  async close(): Promise<void> {
    for (const t of this.#timers) clearTimeout(t);
    clearTimeout(this.#stallEnd);
    for (const c of this.clients) c.socket.terminate();
    await new Promise<void>((resolve) => this.#wss.close(() => resolve()));
    await new Promise<void>((resolve) => this.#http.close(() => resolve()));
  }

  #onConnection(socket: WebSocket, req: IncomingMessage, wire: Duplex): void {
    const client: SimClient = { socket, url: new URL(req.url ?? '/', 'http://localhost'), openedAt: Date.now(), topics: new Set(), sequence: 0 };
    this.clients.add(client);
    this.#wires.set(client, wire);
    socket.on('close', () => {
      this.clients.delete(client);
      this.#wires.delete(client);
    });
    // A client killed with its socket open resets it: the socket closes, the venue goes on.
    socket.on('error', () => socket.terminate());
    // A stalled venue answers nothing, not even a websocket ping: that is what tells it from a quiet market.
    socket.on('ping', (data) => {
      if (!this.stalled) socket.pong(data);
    });
    socket.on('message', (data) => {
      if (this.stalled) this.#held.push({ client, text: data.toString() });
      else this.#protocol?.message(client, data.toString());
    });
    this.#protocol?.open?.(client);
  }

  #serveHttp(req: IncomingMessage, res: ServerResponse): void {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const reply = (status: number, body: unknown) => {
      // A venue that refuses in plain text (Bybit's IP limit) is answered in its words.
      const text = typeof body === 'string';
      res.writeHead(status, { 'content-type': text ? 'text/plain' : 'application/json' });
      res.end(text ? body : JSON.stringify(body));
    };
    if (url.pathname === '/__simulator/fault' && req.method === 'POST') {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString()));
      req.on('end', () => {
        const parsed = faultRequest.safeParse(parseJson(body));
        if (!parsed.success) return reply(400, { error: 'expected {"fault": "drop"|"stall"|"outage"|"garbage"|"gap"|"reconnect", "ms"?, "symbol"?}' });
        this.inject(parsed.data);
        reply(200, { ok: true });
      });
      return;
    }
    if (Date.now() < this.#downUntil) return reply(503, { error: 'simulated outage' });
    const answer = this.#protocol?.rest(url);
    if (answer === undefined) return reply(404, { error: `no route ${url.pathname}` });
    reply(answer.status, answer.body);
  }

  inject(fault: FaultRequest): void {
    switch (fault.fault) {
      case 'drop':
        return this.faults.dropConnections();
      case 'stall':
        return this.faults.stall(fault.ms);
      case 'outage':
        return this.faults.outage(fault.ms);
      case 'garbage':
        return this.faults.garbage();
      case 'gap':
        return this.faults.skipSequence(fault.symbol);
      case 'reconnect':
        return this.faults.requestReconnect();
    }
  }
}
