// The lifecycle every venue shares, driven through real sockets against the simulator's faults.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterEach, describe, expect, test } from 'vitest';
import { WebSocketServer } from 'ws';
import type { MarketEvent, TradeEvent } from '../../infra/events.ts';
import { createLogger } from '../../infra/log.ts';
import { startCollector } from '../collector.ts';
import { ConnectBudget } from '../connectBudget.ts';
import { VenueConnection, type ConnectionOptions } from '../connection.ts';
import { startSimulator } from '../../simulator/simulator.ts';
import { kraken } from '../venues/kraken.ts';
import type { SimTrade } from '../../simulator/market.ts';
import type { SimVenueServer } from '../../simulator/venueServer.ts';
import { until, untilValue } from '../../test/support/until.ts';
import { startLive } from './liveVenue.ts';

const fast = { keepAlive: { pingEveryMs: 150, staleAfterMs: 700 }, backoff: { baseMs: 50, maxMs: 200 } };
const trades = (events: readonly MarketEvent[]) => events.filter((e): e is TradeEvent => e.type === 'trade');

/** The websocket pings (our keep-alive with `fast`) each socket of the venue has received from now on. */
function pingsFromNow(venue: SimVenueServer): () => number[] {
  const counts = [...venue.clients].map((client) => {
    const count = { pings: 0 };
    client.socket.on('ping', () => void (count.pings += 1));
    return count;
  });
  return () => counts.map((c) => c.pings);
}

/** Every trade the venue sent was published once: none twice, and per market the venue's ids run without a hole. */
function expectEveryTradeOnce(sent: readonly SimTrade[], events: readonly MarketEvent[], followed: ReadonlySet<string>): void {
  const keys = trades(events).map((t) => `${t.market}/${t.tradeId}`);
  expect(new Set(keys).size).toBe(keys.length);
  const got = new Set(keys);
  const mine = sent.filter((t) => followed.has(t.symbol));
  for (const t of mine) expect(got.has(`${t.symbol}/${t.id}`), `${t.symbol}/${t.id}`).toBe(true);
  for (const symbol of followed) {
    const ids = mine.filter((t) => t.symbol === symbol).map((t) => t.id);
    expect(ids).toEqual(ids.map((_, i) => ids[0]! + i));
  }
}

describe.each(['binance', 'okx'] as const)('%s: a quiet market is not a dead socket', (id) => {
  test('no trades and no book changes for several stale periods: still connected; a stalled feed that answers nothing is replaced', async () => {
    const { sim, collector } = await startLive(id, { seed: 21, tuning: fast, sim: { tradesPerSecondPerMarket: 0 } });
    await until(() => collector.metrics().connected, 'connected');
    const pings = pingsFromNow(sim.venue(id));
    sim.pause();
    // Three stale periods of silence but for the keep-alive: every socket pinged (and answered) throughout.
    const perSocket = Math.ceil((3 * fast.keepAlive.staleAfterMs) / fast.keepAlive.pingEveryMs);
    await until(() => pings().length > 0 && pings().every((n) => n >= perSocket), `${perSocket} keep-alives on each socket`, 10_000);
    expect(collector.metrics()).toMatchObject({ connected: true, reconnects: 0 });
    // Stalled: the socket stays open but nothing comes back, not even a pong.
    sim.venue(id).faults.stall(1_200);
    await until(() => collector.metrics().reconnects >= 1, 'reconnect of the stalled socket', 3_000);
    sim.resume();
    await until(() => collector.metrics().connected && collector.metrics().lastMessageAgeMs! < 100, 'data after the stall', 5_000);
  });
});

test('frames no rule knows are counted every time and logged once, with the venue and a sample', async () => {
  const lines: Record<string, unknown>[] = [];
  const log = pino({ level: 'info' }, new Writable({ write: (chunk, _enc, done) => (lines.push(JSON.parse(String(chunk))), done()) }));
  const { sim, collector } = await startLive('okx', { seed: 24, tuning: fast, log });
  await until(() => collector.metrics().connected, 'connected');
  for (let i = 0; i < 3; i++) sim.venue('okx').faults.garbage();
  await until(() => collector.metrics().unknownMessages >= 3, 'three unknown frames counted');
  const unknown = lines.filter((l) => l.msg === 'unknown message from the venue: counted, not logged again');
  expect(unknown).toHaveLength(1);
  expect(unknown[0]).toMatchObject({ level: 40, venue: 'okx', sample: expect.any(String) });
});

describe('planned rotation and venue reconnect requests', () => {
  test('rotation before the venue lifetime, with overlap: no reconnect, every trade exactly once', async () => {
    const { sim, collector, events } = await startLive('binance', {
      seed: 22,
      tuning: { ...fast, rotateAfterMs: 1_000, overlapMs: 300 },
      sim: { perVenue: { binance: { maxConnectionMs: 1_500 } } },
    });
    // Each socket outlives the venue's lifetime only by rotating: three rotations span two of its lifetimes.
    await until(() => collector.metrics().rotations >= 3, 'three rotations', 10_000);
    await collector.stop();
    expect(collector.metrics().rotations).toBeGreaterThanOrEqual(3);
    expect(collector.metrics().reconnects).toBe(0);
    expectEveryTradeOnce(sim.venue('binance').trades.since(0), events, new Set(collector.markets().map((m) => m.symbol)));
  });

  test.each(['binance', 'okx'] as const)('%s: the venue notice that it is going away starts a rotation before it closes us', async (id) => {
    const { sim, collector, events } = await startLive(id, { seed: 23, tuning: { ...fast, overlapMs: 300 }, sim: { perVenue: { [id]: { reconnectGraceMs: 800 } } } });
    await until(() => collector.metrics().trades > 20, 'first trades');
    const doomed = [...sim.venue(id).clients];
    sim.venue(id).faults.requestReconnect();
    // The notified sockets gone (closed by us after the overlap, or by the venue after its grace) and a rotation counted.
    await until(() => collector.metrics().rotations >= 1 && doomed.every((c) => !sim.venue(id).clients.has(c)), 'the notified sockets replaced', 5_000);
    await collector.stop();
    expect(collector.metrics()).toMatchObject({ rotations: 1, reconnects: 0 });
    expectEveryTradeOnce(sim.venue(id).trades.since(0), events, new Set(collector.markets().map((m) => m.symbol)));
  });
});

describe('faults', () => {
  test('garbage frames are counted, never fatal', async () => {
    const { sim, collector } = await startLive('bybit', { seed: 24, tuning: fast });
    await until(() => collector.metrics().trades > 5, 'first trades');
    sim.venue('bybit').faults.garbage();
    sim.venue('bybit').faults.garbage();
    await until(() => collector.metrics().unknownMessages >= 2, 'garbage counted');
    const before = collector.metrics().trades;
    await until(() => collector.metrics().trades > before + 5, 'trades after the garbage');
    expect(collector.metrics()).toMatchObject({ reconnects: 0, connected: true });
  });

  test('an outage: refused connections and REST are retried with backoff until the venue is back', async () => {
    const { sim, collector } = await startLive('binance-futures', { seed: 25, tuning: fast });
    await until(() => collector.metrics().trades > 5, 'first trades');
    sim.venue('binance-futures').faults.outage(1_000);
    await until(() => collector.metrics().reconnects >= 2, 'reconnect attempts');
    // The venue accepts sockets again: the outage is over.
    await until(() => sim.venue('binance-futures').clients.size > 0, 'a socket accepted after the outage', 5_000);
    await until(() => collector.metrics().connected && collector.metrics().lastMessageAgeMs! < 100, 'back after the outage', 5_000);
    // Books come back too: depth snapshots are fetched again over REST.
    const before = collector.metrics().trades;
    await until(() => collector.metrics().trades > before + 5, 'trades after the outage');
  });

  test('every reconnect is logged with the venue and the reason', async () => {
    const lines: Record<string, unknown>[] = [];
    const log = pino({ level: 'info' }, new Writable({ write: (chunk, _enc, done) => (lines.push(JSON.parse(String(chunk))), done()) }));
    const sim = await startSimulator({ venues: ['kraken'], tickers: ['BTC'], seed: 27 });
    const collector = await startCollector({ venue: kraken, endpoints: sim.endpoints('kraken'), bus: { publish: () => {} }, log, tuning: fast });
    try {
      await until(() => collector.metrics().connected, 'connected');
      sim.venue('kraken').faults.dropConnections();
      await until(() => lines.some((l) => l.msg === 'disconnected: reconnecting'), 'reconnect log line');
      expect(lines.find((l) => l.msg === 'disconnected: reconnecting')).toMatchObject({ level: 40, venue: 'kraken', reason: 'closed' });
    } finally {
      await collector.stop();
      await sim.close();
    }
  });

  test('metrics: markets, unmapped markets, rates and last-message age', async () => {
    const { collector } = await startLive('binance-futures', { seed: 26 });
    // The rates need two of the once-a-second samples.
    const m = await untilValue(() => {
      const now = collector.metrics();
      return now.messagesPerSecond > 0 && now.tradesPerSecond > 0 ? now : undefined;
    }, 'rates over two samples', 5_000);
    expect(m).toMatchObject({ venue: 'binance-futures', connected: true, markets: 5, unmappedMarkets: 1 });
    expect(collector.unmapped()).toEqual(['1000PEPEUSDT']);
    expect(m.messagesPerSecond).toBeGreaterThan(10);
    expect(m.tradesPerSecond).toBeGreaterThan(5);
    expect(m.lastMessageAgeMs).toBeLessThan(500);
  });
});

describe('connection', () => {
  let close: (() => Promise<void>) | undefined;
  afterEach(async () => close?.());

  /** A connection to the loopback server `http`, quiet but for what `options` add. */
  const connectionTo = (http: Server, options: Partial<ConnectionOptions> = {}) =>
    new VenueConnection({
      url: `ws://127.0.0.1:${(http.address() as AddressInfo).port}`,
      log: createLogger('silent'),
      subscribeMessages: () => [],
      keepAlive: { pingEveryMs: 60_000, staleAfterMs: 60_000 },
      sendsPerSecond: 5,
      onMessage: () => {},
      ...options,
    });
  /** After the test: the connections, then the servers. */
  const closeAfter = (connections: VenueConnection[], wss: WebSocketServer, http: Server) =>
    (close = async () => {
      await Promise.all(connections.map((c) => c.close()));
      wss.close();
      http.close();
    });

  test('subscriptions are sent no faster than the venue allows', async () => {
    const http = createServer();
    const wss = new WebSocketServer({ server: http });
    const arrivals: number[] = [];
    wss.on('connection', (s) => s.on('message', () => arrivals.push(Date.now())));
    await new Promise<void>((r) => http.listen(0, '127.0.0.1', r));
    const connection = connectionTo(http, { subscribeMessages: () => Array.from({ length: 6 }, (_, i) => `subscribe ${i}`) });
    closeAfter([connection], wss, http);
    connection.start();
    await until(() => arrivals.length === 6, 'six subscriptions');
    const gaps = arrivals.slice(1).map((t, i) => t - arrivals[i]!);
    for (const gap of gaps) expect(gap).toBeGreaterThanOrEqual(180);
  });

  test("sockets that share a venue's connection budget open no more than it allows in its window: the third of 2 a window waits", async () => {
    const http = createServer();
    const wss = new WebSocketServer({ server: http });
    const opened: number[] = [];
    wss.on('connection', () => opened.push(Date.now()));
    await new Promise<void>((r) => http.listen(0, '127.0.0.1', r));
    const budget = new ConnectBudget({ connections: 2, windowMs: 1_500 });
    const connections = [0, 1, 2].map(() => connectionTo(http, { admit: () => budget.take() }));
    closeAfter(connections, wss, http);
    const started = Date.now();
    for (const c of connections) c.start();
    await until(() => opened.length >= 2, 'two sockets at once');
    expect(opened).toHaveLength(2);
    expect(opened.every((t) => t - started < 1_000)).toBe(true);
    expect(budget.waiting).toBe(1);
    await until(() => opened.length === 3, 'the third socket', 5_000);
    // Its turn came when the first turn left the window (timers fire on time or later, never early).
    expect(opened[2]! - started).toBeGreaterThanOrEqual(1_500);
  });

  test.each([
    [503, 'the venue down: the refused attempts are given back, and the socket opens at once when it is back', 0, 1_000],
    [429, 'the venue counting us: the refused attempt keeps its turn, and the next waits for the window', 1_500, 5_000],
  ])("an upgrade answered %i, a budget of 1 connection in 1.5 s: %s", async (status, _what, atLeastMs, withinMs) => {
    const http = createServer();
    const wss = new WebSocketServer({ noServer: true });
    const attempts: number[] = [];
    let opened: number | undefined;
    http.on('upgrade', (req, socket, head) => {
      attempts.push(Date.now());
      if (attempts.length <= 2) return void socket.end(`HTTP/1.1 ${status} Refused\r\nConnection: close\r\n\r\n`);
      wss.handleUpgrade(req, socket, head, () => (opened = Date.now()));
    });
    await new Promise<void>((r) => http.listen(0, '127.0.0.1', r));
    const budget = new ConnectBudget({ connections: 1, windowMs: 1_500 });
    const connection = connectionTo(http, { admit: () => budget.take(), backoff: { baseMs: 20, maxMs: 40 } });
    closeAfter([connection], wss, http);
    connection.start();
    await until(() => opened !== undefined, 'the socket open', 10_000);
    const after = opened! - attempts[0]!;
    expect(after).toBeGreaterThanOrEqual(atLeastMs);
    expect(after).toBeLessThan(withinMs);
  });
});
