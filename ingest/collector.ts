import type { Bus } from '../infra/bus/bus.ts';
import type { Config } from '../infra/config.ts';
import type { BookEvent } from '../infra/events.ts';
import type { Logger } from '../infra/log.ts';
import { VenueConnection } from './connection.ts';
import {
  binance,
  BinanceBookSync,
  parseExchangeInfo,
  parseMessage,
  subscribeMessages,
  toSnapshot,
  toTradeEvent,
  type BinanceMarket,
} from './venues/binance.ts';

export interface CollectorMetrics {
  connected: boolean;
  messages: number;
  trades: number;
  reconnects: number;
  resyncs: number;
  unknownMessages: number;
  lastMessageAt: number | undefined;
}

export interface Collector {
  /** The venue markets followed. */
  markets(): readonly string[];
  metrics(): CollectorMetrics;
  /** Resolves once the markets are known and the stream is opening. */
  ready(): Promise<void>;
  stop(): Promise<void>;
}

export interface CollectorOptions {
  venue: 'binance';
  config: Config;
  bus: Pick<Bus, 'publish'>;
  log: Logger;
}

/** Levels per side in the book events we publish. */
const bookDepth = 50;
const bookEveryMs = 1_000;
/** REST snapshots fetched at once (each costs request weight at the venue). */
const snapshotConcurrency = 4;

async function getJson(url: string): Promise<unknown> {
  const res = await fetch(url, { signal: AbortSignal.timeout(10_000) });
  if (!res.ok) throw new Error(`GET ${url}: HTTP ${res.status}`);
  return res.json();
}

/** Retries with jittered backoff until it succeeds or `stopped()` says to give up. */
async function retrying<T>(what: string, log: Logger, stopped: () => boolean, fn: () => Promise<T>): Promise<T | undefined> {
  for (let attempt = 0; !stopped(); attempt++) {
    try {
      return await fn();
    } catch (err) {
      const delay = Math.random() * Math.min(30_000, 500 * 2 ** attempt);
      log.warn({ err: (err as Error).message, retryInMs: Math.round(delay) }, `${what} failed`);
      for (const until = Date.now() + delay; Date.now() < until && !stopped(); ) await new Promise((r) => setTimeout(r, 250));
    }
  }
  return undefined;
}

/**
 * A venue collector: resolves the markets, streams trades and depth diffs, keeps each market's
 * book in sync, and publishes trades as they come and book tops once a second.
 */
export async function startCollector(options: CollectorOptions): Promise<Collector> {
  const { config, bus, log } = options;
  const restUrl = binance.restUrl(config);
  let stopped = false;
  const counters = { trades: 0, unknownMessages: 0 };

  let markets: BinanceMarket[] = [];
  const bySymbol = new Map<string, BinanceMarket>();
  const books = new Map<string, BinanceBookSync>();
  const fetching = new Set<string>();
  const snapshotQueue: string[] = [];

  async function fetchSnapshot(symbol: string): Promise<void> {
    const sync = books.get(symbol)!;
    try {
      const json = await getJson(`${restUrl}/api/v3/depth?symbol=${encodeURIComponent(symbol)}&limit=${binance.snapshotLimit}`);
      const outcome = sync.onSnapshot(toSnapshot(json));
      if (outcome !== 'synced') log.debug({ symbol, outcome }, 'book snapshot not usable yet');
    } catch (err) {
      log.warn({ symbol, err: (err as Error).message }, 'depth snapshot failed');
      await new Promise((r) => setTimeout(r, 1_000));
    } finally {
      fetching.delete(symbol);
      pumpSnapshots();
    }
  }

  function pumpSnapshots(): void {
    while (!stopped && fetching.size < snapshotConcurrency && snapshotQueue.length > 0) {
      const symbol = snapshotQueue.shift()!;
      if (!books.get(symbol)!.wantsSnapshot) continue;
      fetching.add(symbol);
      void fetchSnapshot(symbol);
    }
  }

  function wantSnapshot(symbol: string): void {
    if (!fetching.has(symbol) && !snapshotQueue.includes(symbol)) {
      snapshotQueue.push(symbol);
      pumpSnapshots();
    }
  }

  let connection: VenueConnection | undefined;
  const connect = () => new VenueConnection({
    name: binance.id,
    url: binance.wsUrl(config),
    log,
    staleAfterMs: binance.staleAfterMs,
    subscribeMessages: () => subscribeMessages(markets),
    // Diffs missed while disconnected make every book stale.
    onOpen: () => {
      for (const sync of books.values()) sync.reset();
    },
    onMessage(text, receivedAt) {
      const message = parseMessage(text);
      switch (message.kind) {
        case 'trade': {
          const market = bySymbol.get(message.symbol);
          if (!market) return;
          counters.trades += 1;
          bus.publish([toTradeEvent(message, market, receivedAt)]);
          return;
        }
        case 'depth': {
          const sync = books.get(message.diff.symbol);
          if (!sync) return;
          const outcome = sync.onDiff(message.diff);
          if (outcome === 'gap') log.warn({ symbol: message.diff.symbol, reason: 'sequence gap' }, 'book resync');
          if (sync.wantsSnapshot) wantSnapshot(message.diff.symbol);
          return;
        }
        case 'ack':
          return;
        case 'unknown':
          counters.unknownMessages += 1;
          if (counters.unknownMessages <= 10) log.debug({ text: text.slice(0, 200) }, 'unknown message');
          return;
      }
    },
  });
  // Resolving markets waits for the venue, which may be down: start-up does not wait for it.
  const started = (async () => {
    const info = await retrying('exchangeInfo', log, () => stopped, () => getJson(`${restUrl}/api/v3/exchangeInfo`));
    if (stopped) return;
    const resolved = parseExchangeInfo(info);
    if (resolved.unmapped.length > 0)
      log.info({ count: resolved.unmapped.length, unmapped: resolved.unmapped.slice(0, 50) }, 'base assets not in the catalog: not collected');
    markets = resolved.markets;
    for (const m of markets) {
      bySymbol.set(m.symbol, m);
      books.set(m.symbol, new BinanceBookSync());
    }
    log.info({ markets: markets.length }, 'markets resolved');
    connection = connect();
    connection.start();
  })();

  const publishBooks = setInterval(() => {
    const now = Date.now();
    const events: BookEvent[] = [];
    for (const [symbol, sync] of books) {
      if (!sync.synced) continue;
      const m = bySymbol.get(symbol)!;
      events.push({
        type: 'book',
        venue: binance.id,
        market: symbol,
        asset: m.asset,
        quote: m.quoteAsset,
        ts: now,
        receivedAt: now,
        bids: sync.book.top('bid', bookDepth),
        asks: sync.book.top('ask', bookDepth),
      });
    }
    if (events.length > 0) bus.publish(events);
  }, bookEveryMs);

  return {
    markets: () => markets.map((m) => m.symbol),
    ready: async () => {
      await started;
    },
    metrics: () => ({
      connected: connection?.metrics.connected ?? false,
      messages: connection?.metrics.messages ?? 0,
      trades: counters.trades,
      reconnects: connection?.metrics.reconnects ?? 0,
      resyncs: [...books.values()].reduce((n, s) => n + s.resyncs, 0),
      unknownMessages: counters.unknownMessages,
      lastMessageAt: connection?.metrics.lastMessageAt,
    }),
    async stop() {
      stopped = true;
      clearInterval(publishBooks);
      await started;
      await connection?.close();
    },
  };
}
