import { afterEach, describe, expect, test } from 'vitest';
import WebSocket from 'ws';
import { MarketModel } from '../market.ts';
import { startSimulator, type Simulator } from '../simulator.ts';
import { until } from '../../ingest/__tests__/liveVenue.ts';

describe('one market model behind every venue', () => {
  test('cross-venue prices agree up to each venue bias, step after step', () => {
    const model = new MarketModel(3, { tradesPerSecondPerMarket: 50 });
    const spec = [{ symbol: 'X', base: 'BTC', quote: 'USDT' }];
    const plain = model.listing('a', spec);
    const biased = model.listing('b', spec, 25);
    const [a] = plain.markets;
    const [b] = biased.markets;
    for (let t = 0; t < 20; t++) {
      model.advance(100);
      expect(biased.mid(b!) / plain.mid(a!)).toBeCloseTo(1.0025, 12);
      const { trades } = biased.step(b!, t * 100, t * 100 + 99);
      // The taker pays one to three ticks through the venue's own mid (then rounded to the tick).
      for (const trade of trades) expect(Math.abs(Number(trade.price) - biased.mid(b!))).toBeLessThanOrEqual(3.5 * b!.tick);
    }
  });

  test('contract venues quote sizes in contracts; unit-priced listings (1000PEPE) price the multiple', () => {
    const model = new MarketModel(4, { tradesPerSecondPerMarket: 50 });
    const listing = model.listing('c', [
      { symbol: 'PEPE', base: 'PEPE', quote: 'USDT' },
      { symbol: '1000PEPE', base: '1000PEPE', quote: 'USDT', unit: 1000 },
      { symbol: 'BTC-SWAP', base: 'BTC', quote: 'USDT', contractSize: 0.01, perpetual: true },
    ]);
    const [pepe, thousand, swap] = listing.markets;
    expect(listing.mid(thousand!) / listing.mid(pepe!)).toBeCloseTo(1000, 9);
    const { trades, liquidations } = listing.step(swap!, 0, 10_000);
    expect(trades.length).toBeGreaterThan(100);
    expect(liquidations.length).toBeGreaterThan(0);
    for (const t of trades) expect(Number.isInteger(Number(t.qty))).toBe(true);
  });
});

describe('simulator faults and latency, on command', () => {
  let sim: Simulator | undefined;
  afterEach(async () => sim?.close());

  test('latency is added to every message of the venue', async () => {
    sim = await startSimulator({ venues: ['binance'], tickers: ['BTC'], tradesPerSecondPerMarket: 40, perVenue: { binance: { latencyMs: 150 } } });
    const delays: number[] = [];
    const socket = new WebSocket(`${sim.endpoints('binance').ws}/ws/btcusdt@trade`);
    socket.on('message', (data) => delays.push(Date.now() - (JSON.parse(data.toString()) as { T: number }).T));
    await until(() => delays.length >= 20, 'trades');
    socket.terminate();
    expect(Math.min(...delays)).toBeGreaterThanOrEqual(150);
  });

  test('faults over HTTP: garbage reaches clients, an outage answers 503, a bad request names the faults', async () => {
    sim = await startSimulator({ venues: ['okx'], tickers: ['BTC'] });
    const { ws, rest } = sim.endpoints('okx');
    const frames: string[] = [];
    const socket = new WebSocket(`${ws}/ws/v5/public`);
    socket.on('message', (data) => frames.push(data.toString()));
    await new Promise((r) => socket.once('open', r));
    const fault = (body: unknown) => fetch(`${rest}/__simulator/fault`, { method: 'POST', body: JSON.stringify(body) });
    expect((await fault({ fault: 'garbage' })).status).toBe(200);
    await until(() => frames.some((f) => f.startsWith('\u0000')), 'garbage frame');
    const refused = await fault({ fault: 'melt' });
    expect(refused.status).toBe(400);
    expect(await refused.text()).toMatch(/drop.*stall.*outage.*garbage.*gap.*reconnect/);
    expect((await fault({ fault: 'outage', ms: 500 })).status).toBe(200);
    expect((await fetch(`${rest}/api/v5/public/instruments?instType=SPOT`)).status).toBe(503);
    await until(() => socket.readyState === WebSocket.CLOSED, 'socket dropped by the outage');
    await new Promise((r) => setTimeout(r, 600));
    expect((await fetch(`${rest}/api/v5/public/instruments?instType=SPOT`)).status).toBe(200);
  });
});

describe('what a venue sent stays bounded over a long run', () => {
  let sim: Simulator | undefined;
  afterEach(async () => sim?.close());

  test('only the last retainSent trades are kept, all are counted; onTradeSent sees every one, with the id on the wire', async () => {
    sim = await startSimulator({ venues: ['binance'], tickers: ['BTC'], tradesPerSecondPerMarket: 400, tickMs: 20, perVenue: { binance: { retainSent: 30 } } });
    const venue = sim.venue('binance');
    const heard: string[] = [];
    const wire: string[] = [];
    sim.onTradeSent((t) => heard.push(`${t.venue}/${t.market}/${t.tradeId}`));
    const socket = new WebSocket(`${sim.endpoints('binance').ws}/ws/btcusdt@trade`);
    socket.on('message', (data) => {
      const trade = JSON.parse(data.toString()) as { s: string; t: number };
      wire.push(`binance/${trade.s}/${trade.t}`);
    });
    await until(() => venue.trades.count >= 200, 'trades');
    sim.pause();
    await until(() => wire.length === venue.trades.count, 'the last frames');
    socket.terminate();

    expect(heard).toEqual(wire);
    const kept = venue.trades.recent();
    expect(kept).toHaveLength(30);
    expect(kept.map((t) => `binance/${t.symbol}/${t.id}`)).toEqual(wire.slice(-30));
    expect(venue.trades.since(venue.trades.count - 10).map((t) => t.id)).toEqual(kept.slice(-10).map((t) => t.id));
    // A test can never compare against a silently shortened list.
    expect(() => venue.trades.since(0)).toThrow(RangeError);
  });
});
