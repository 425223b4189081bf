// A loopback server speaking Binance spot's public websocket and REST protocol over the
// SIMULATED market model: the collector reads it exactly as it would read the venue.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';
import { MarketModel, type SimMarket, type SimTrade } from './market.ts';

export type { SimTrade };

export interface BinanceSimulatorOptions {
  /** 0 = any free port. */
  port?: number;
  seed?: number;
  tradesPerSecondPerAsset?: number;
  pingIntervalMs?: number;
  /** How often the model advances and diffs are sent (Binance's fast depth stream: 100 ms). */
  tickMs?: number;
}

export interface BinanceSimulator {
  wsUrl: string;
  restUrl: string;
  /** Every trade sent to at least one subscriber, in order. */
  trades: readonly SimTrade[];
  /** The next depth diff of this market is not sent: its subscribers see a sequence gap. */
  injectGap(symbol: string): void;
  /** Closes every client socket abruptly. */
  dropConnections(): void;
  close(): Promise<void>;
}

interface Client {
  socket: WebSocket;
  combined: boolean;
  streams: Set<string>;
}

export async function startBinanceSimulator(options: BinanceSimulatorOptions = {}): Promise<BinanceSimulator> {
  const model = new MarketModel(options.seed ?? 1, options.tradesPerSecondPerAsset ?? 2);
  const bySymbol = new Map<string, SimMarket>(model.markets.map((m) => [m.symbol, m]));
  const clients = new Set<Client>();
  const trades: SimTrade[] = [];
  const gaps = new Set<string>();

  const http = createServer((req, res) => serveRest(req, res));
  const wss = new WebSocketServer({ server: http });

  function serveRest(req: IncomingMessage, res: ServerResponse): void {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const reply = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (url.pathname === '/api/v3/exchangeInfo') {
      return reply(200, {
        timezone: 'UTC',
        serverTime: Date.now(),
        rateLimits: [],
        exchangeFilters: [],
        symbols: model.markets.map((m) => ({
          symbol: m.symbol,
          status: 'TRADING',
          baseAsset: m.baseAsset,
          baseAssetPrecision: 8,
          quoteAsset: m.quoteAsset,
          quotePrecision: 8,
          filters: [{ filterType: 'PRICE_FILTER', tickSize: m.tick.toFixed(m.priceDecimals) }],
        })),
      });
    }
    if (url.pathname === '/api/v3/depth') {
      const m = bySymbol.get(url.searchParams.get('symbol') ?? '');
      if (!m) return reply(400, { code: -1121, msg: 'Invalid symbol.' });
      const limit = Math.min(5_000, Number(url.searchParams.get('limit') ?? 100) || 100);
      const sorted = (levels: Map<string, string>, desc: boolean) =>
        [...levels].sort((a, b) => (desc ? Number(b[0]) - Number(a[0]) : Number(a[0]) - Number(b[0]))).slice(0, limit);
      return reply(200, { lastUpdateId: m.updateId, bids: sorted(m.bids, true), asks: sorted(m.asks, false) });
    }
    reply(404, { code: -1000, msg: 'Unknown path.' });
  }

  wss.on('connection', (socket, req) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const combined = url.pathname === '/stream';
    const initial = combined ? (url.searchParams.get('streams') ?? '').split('/') : [url.pathname.replace(/^\/ws\/?/, '')];
    const client: Client = { socket, combined, streams: new Set(initial.filter(Boolean)) };
    clients.add(client);
    socket.on('close', () => clients.delete(client));
    socket.on('message', (data) => {
      let request: { method?: unknown; params?: unknown; id?: unknown };
      try {
        request = JSON.parse(data.toString());
      } catch {
        return socket.send(JSON.stringify({ error: { code: 3, msg: 'Invalid JSON' } }));
      }
      const params = Array.isArray(request.params) ? request.params.map(String) : [];
      if (request.method === 'SUBSCRIBE') for (const s of params) client.streams.add(s);
      else if (request.method === 'UNSUBSCRIBE') for (const s of params) client.streams.delete(s);
      else if (request.method === 'LIST_SUBSCRIPTIONS') return socket.send(JSON.stringify({ result: [...client.streams], id: request.id }));
      else return socket.send(JSON.stringify({ error: { code: 2, msg: 'Invalid request' }, id: request.id }));
      socket.send(JSON.stringify({ result: null, id: request.id }));
    });
  });

  function send(stream: string, data: unknown): boolean {
    let sent = false;
    for (const c of clients) {
      if (!c.streams.has(stream) || c.socket.readyState !== c.socket.OPEN) continue;
      c.socket.send(JSON.stringify(c.combined ? { stream, data } : data));
      sent = true;
    }
    return sent;
  }

  let lastTick = Date.now();
  const ticker = setInterval(() => {
    const now = Date.now();
    for (const m of model.markets) {
      const { trades: stepTrades, diff } = model.step(m, lastTick + 1, now);
      const name = m.symbol.toLowerCase();
      for (const t of stepTrades) {
        const data = { e: 'trade', E: now, s: t.symbol, t: t.id, p: t.price, q: t.qty, T: t.time, m: t.isBuyerMaker, M: true };
        if (send(`${name}@trade`, data)) trades.push(t);
      }
      if (gaps.delete(m.symbol)) continue;
      const depth = { e: 'depthUpdate', E: now, s: m.symbol, U: diff.firstUpdateId, u: diff.finalUpdateId, b: diff.bids, a: diff.asks };
      send(`${name}@depth@100ms`, depth);
      send(`${name}@depth`, depth);
    }
    lastTick = now;
  }, options.tickMs ?? 100);

  const pinger = setInterval(() => {
    for (const c of clients) c.socket.ping();
  }, options.pingIntervalMs ?? 20_000);

  http.listen(options.port ?? 0, '127.0.0.1');
  await new Promise<void>((resolve, reject) => {
    http.once('listening', resolve);
    http.once('error', reject);
  });
  const { port } = http.address() as AddressInfo;

  return {
    wsUrl: `ws://127.0.0.1:${port}`,
    restUrl: `http://127.0.0.1:${port}`,
    trades,
    injectGap: (symbol) => void gaps.add(symbol),
    dropConnections() {
      for (const c of clients) c.socket.terminate();
    },
    async close() {
      clearInterval(ticker);
      clearInterval(pinger);
      for (const c of clients) c.socket.terminate();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}
