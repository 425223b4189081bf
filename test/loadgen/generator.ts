// The load generator: per venue, an HTTP + websocket server on loopback speaking the venue's format
// (venues/), sending trades and book changes at the rates it is given, spread evenly over the
// venue's markets, and counting what it sent (per venue, and trades per second of venue time) so
// that a benchmark can check that the service stored every one. main.ts runs it as its own process.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import { assetIdForVenueTicker } from '../../infra/catalog/catalog.ts';
import { simulatedTickers } from '../../simulator/market.ts';
import { loadMarket, nextBookChange, nextTrade, type LoadMarket } from './market.ts';
import { loadVenueFormats, type Frames, type LoadClient, type LoadVenueFormat } from './venues/index.ts';

/** Messages per second a whole venue sends. */
export interface VenueRate {
  trades: number;
  books: number;
}

export interface LoadGeneratorOptions {
  /** Venue ids of loadVenueFormats. */
  venues: readonly string[];
  /** Markets per venue (the simulator's tickers that the catalog maps for that venue, in order). */
  markets: number;
  rates: Readonly<Record<string, VenueRate>>;
  /** A client with more than this many bytes unsent is dropped, as a venue drops a slow reader (default 256 MiB). */
  maxBufferedBytes?: number;
}

export interface SentCounts {
  trades: number;
  books: number;
  frames: number;
  bytes: number;
  /** Clients dropped for reading too slowly: what was buffered for them is lost. */
  droppedClients: number;
  perVenue: Record<string, { trades: number; books: number }>;
  /** Trades sent per second of venue time (unix seconds). */
  perSecond: Record<number, number>;
}

/** A market with its topic names made once. */
interface Stream {
  market: LoadMarket;
  trades: string;
  books: string;
}

interface Client extends LoadClient {
  socket: WebSocket;
  /** The TCP socket under it: corked for a tick, so that the tick's frames leave in one write. */
  tcp: Duplex;
}

const tickMs = 5;

/** The markets a venue trades: the first `count` simulator tickers the catalog maps for it. */
export function venueMarkets(format: LoadVenueFormat, count: number, seed = 1): LoadMarket[] {
  const tickers = simulatedTickers.filter((t) => assetIdForVenueTicker(format.id, t) !== undefined).slice(0, count);
  return tickers.map((base, i) => {
    const { symbol, quote, inverse } = format.market(base);
    return loadMarket(symbol, base, quote, seed * 1_000 + i, inverse);
  });
}

class VenueLoad {
  readonly format: LoadVenueFormat;
  readonly streams: Stream[];
  readonly markets: Map<string, LoadMarket>;
  readonly clients = new Set<Client>();
  readonly sent = { trades: 0, books: 0 };
  rate: VenueRate;
  #tradeCredit = 0;
  #bookCredit = 0;
  #nextTradeStream = 0;
  #nextBookStream = 0;
  readonly #http: Server;
  readonly #wss = new WebSocketServer({ noServer: true });
  readonly #counts: SentCounts;
  readonly #maxBuffered: number;

  constructor(format: LoadVenueFormat, markets: LoadMarket[], rate: VenueRate, counts: SentCounts, maxBuffered: number) {
    this.format = format;
    this.streams = markets.map((market) => ({ market, trades: `trades:${market.symbol}`, books: `books:${market.symbol}` }));
    this.markets = new Map(markets.map((m) => [m.symbol, m]));
    this.rate = rate;
    this.#counts = counts;
    this.#maxBuffered = maxBuffered;
    this.#http = createServer((req, res) => this.#rest(req, res));
    this.#http.on('upgrade', (req, socket, head) => this.#wss.handleUpgrade(req, socket, head, (ws) => this.#connect(ws, socket)));
  }

  get port(): number {
    return (this.#http.address() as AddressInfo).port;
  }

  async listen(): Promise<void> {
    this.#http.listen(0, '127.0.0.1');
    await new Promise<void>((resolve, reject) => this.#http.once('listening', resolve).once('error', reject));
  }

  /**
   * Sends what is owed after `ms` at the current rates (trades times `tradeFactor`). A busy venue's
   * frames share TCP segments; one write per frame would cost the generator (and the reader) a
   * system call per frame, most of its CPU at tens of thousands of frames a second.
   */
  step(ms: number, now: number, tradeFactor: number): void {
    const corked = [...this.clients].map((c) => c.tcp);
    for (const tcp of corked) tcp.cork();
    try {
      this.#owed(ms, now, tradeFactor);
    } finally {
      for (const tcp of corked) tcp.uncork();
    }
  }

  #owed(ms: number, now: number, tradeFactor: number): void {
    this.#tradeCredit += (this.rate.trades * tradeFactor * ms) / 1000;
    this.#bookCredit += (this.rate.books * ms) / 1000;
    const second = Math.floor(now / 1000);
    for (; this.#tradeCredit >= 1; this.#tradeCredit--) {
      const stream = this.streams[this.#nextTradeStream++ % this.streams.length]!;
      const trade = nextTrade(stream.market);
      if (this.#send(stream.trades, (c) => this.format.trade(stream.market, trade, now, c))) {
        this.sent.trades++;
        this.#counts.trades++;
        this.#counts.perSecond[second] = (this.#counts.perSecond[second] ?? 0) + 1;
      }
    }
    for (; this.#bookCredit >= 1; this.#bookCredit--) {
      const stream = this.streams[this.#nextBookStream++ % this.streams.length]!;
      const change = nextBookChange(stream.market);
      if (this.#send(stream.books, (c) => this.format.book(stream.market, change, now, c))) {
        this.sent.books++;
        this.#counts.books++;
      }
    }
  }

  /** Whether every market has a client subscribed to its trades and to its books. */
  allSubscribed(): boolean {
    const topics = new Set([...this.clients].flatMap((c) => [...c.topics]));
    return this.streams.every((s) => topics.has(s.trades) && topics.has(s.books));
  }

  heartbeat(now: number): void {
    const heartbeat = this.format.heartbeat;
    if (heartbeat) this.#send('heartbeats', (c) => heartbeat(now, c));
  }

  /** Sends to every client subscribed to `topic`; whether any got it. */
  #send(topic: string, render: (client: LoadClient) => Frames): boolean {
    let shared: Frames | undefined;
    let delivered = false;
    for (const c of this.clients) {
      if (!c.topics.has(topic)) continue;
      const frames = this.format.perClient ? render(c) : (shared ??= render(c));
      if (typeof frames === 'string') c.send(frames);
      else for (const frame of frames) c.send(frame);
      delivered = true;
    }
    return delivered;
  }

  #connect(socket: WebSocket, tcp: Duplex): void {
    const client: Client = {
      socket,
      tcp,
      topics: new Set(),
      sequence: 0,
      send: (text) => {
        if (socket.readyState !== socket.OPEN) return;
        socket.send(text);
        this.#counts.frames++;
        this.#counts.bytes += text.length;
        if (socket.bufferedAmount > this.#maxBuffered) {
          this.#counts.droppedClients++;
          socket.terminate();
        }
      },
    };
    this.clients.add(client);
    socket.on('close', () => this.clients.delete(client));
    socket.on('message', (data) => this.format.message(client, data.toString(), this.markets));
    this.format.open?.(client);
  }

  #rest(req: IncomingMessage, res: ServerResponse): void {
    // The host as the client wrote it: a venue that hands out its websocket endpoint over REST (KuCoin) names it.
    const body = this.format.rest(new URL(req.url ?? '/', `http://${req.headers.host ?? 'loadgen'}`), this.markets);
    res.writeHead(body === undefined ? 404 : 200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body ?? { error: 'not found' }));
  }

  async close(): Promise<void> {
    for (const c of this.clients) c.socket.terminate();
    await new Promise<void>((resolve) => this.#wss.close(() => resolve()));
    await new Promise<void>((resolve) => this.#http.close(() => resolve()));
  }
}

export class LoadGenerator {
  readonly #venues: VenueLoad[];
  readonly #counts: SentCounts;
  readonly #timer: NodeJS.Timeout;
  #last = Date.now();
  #lastHeartbeat = 0;
  #burst = { factor: 1, until: 0 };

  private constructor(venues: VenueLoad[], counts: SentCounts) {
    this.#venues = venues;
    this.#counts = counts;
    this.#timer = setInterval(() => this.#tick(), tickMs);
  }

  static async start(options: LoadGeneratorOptions): Promise<LoadGenerator> {
    const counts: SentCounts = { trades: 0, books: 0, frames: 0, bytes: 0, droppedClients: 0, perVenue: {}, perSecond: {} };
    const venues = options.venues.map((id) => {
      const make = loadVenueFormats[id];
      if (!make) throw new Error(`loadgen: no format for venue ${id}; known: ${Object.keys(loadVenueFormats).join(', ')}`);
      const format = make();
      return new VenueLoad(format, venueMarkets(format, options.markets), options.rates[id] ?? { trades: 0, books: 0 }, counts, options.maxBufferedBytes ?? 256 * 1024 * 1024);
    });
    await Promise.all(venues.map((v) => v.listen()));
    return new LoadGenerator(venues, counts);
  }

  /** Where the service reaches each venue (VENUE_<ID>_WS_URL and _REST_URL). */
  endpoints(): Record<string, { ws: string; rest: string }> {
    return Object.fromEntries(this.#venues.map((v) => [v.format.id, { ws: `ws://127.0.0.1:${v.port}`, rest: `http://127.0.0.1:${v.port}` }]));
  }

  /** A venue's markets as they stand (their books: what a collector's books must equal). */
  markets(venue: string): readonly LoadMarket[] {
    return [...(this.#venues.find((v) => v.format.id === venue)?.markets.values() ?? [])];
  }

  /** Whether every market of `venue` has a client subscribed to its trades and to its books (frames before that reach nobody). */
  subscribed(venue: string): boolean {
    return this.#venues.find((v) => v.format.id === venue)?.allSubscribed() ?? false;
  }

  /** New rates for the venues named; the others keep theirs. */
  setRates(rates: Readonly<Record<string, VenueRate>>): void {
    for (const v of this.#venues) v.rate = rates[v.format.id] ?? v.rate;
  }

  /** Trades x `factor` for `ms` (a crash); books keep their rate. */
  burst(factor: number, ms: number): void {
    this.#burst = { factor, until: Date.now() + ms };
  }

  sent(): SentCounts {
    return { ...this.#counts, perVenue: Object.fromEntries(this.#venues.map((v) => [v.format.id, { ...v.sent }])), perSecond: { ...this.#counts.perSecond } };
  }

  #tick(): void {
    const now = Date.now();
    const ms = now - this.#last;
    this.#last = now;
    const factor = now < this.#burst.until ? this.#burst.factor : 1;
    for (const v of this.#venues) v.step(ms, now, factor);
    if (now - this.#lastHeartbeat >= 1_000) {
      this.#lastHeartbeat = now;
      for (const v of this.#venues) v.heartbeat(now);
    }
  }

  async close(): Promise<void> {
    clearInterval(this.#timer);
    await Promise.all(this.#venues.map((v) => v.close()));
  }
}
