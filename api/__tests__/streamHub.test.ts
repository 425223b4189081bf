// The stream hub on its own, with stand-in sockets and a held clock: who is subscribed to what,
// what the pollers are asked for, the limits, and a slow reader's close and cut. The socket
// end-to-end is stream.store.test.ts.
import { EventEmitter } from 'node:events';
import { afterEach, describe, expect, test, vi } from 'vitest';
import type { WebSocket } from 'ws';
import type { TradeEvent } from '../../infra/events.ts';
import type { Logger } from '../../infra/log.ts';
import type { PriceEntry } from '../read/prices.ts';
import { ApiError } from '../errors.ts';
import type { StreamCandle, StreamTopic } from '../stream/protocol.ts';
import { closeCodes, StreamConnection, StreamHub } from '../stream/hub.ts';

/** A socket that records what the hub does to it; `close` waits for `handshakeEnds()`, as a real close does. */
class FakeSocket extends EventEmitter {
  readonly OPEN = 1;
  readyState = 1;
  bufferedAmount = 0;
  readonly sent: unknown[] = [];
  readonly closes: { code: number; reason: string }[] = [];
  terminated = 0;

  send(text: string): void {
    this.sent.push(JSON.parse(text));
  }
  close(code: number, reason: string): void {
    this.closes.push({ code, reason });
    this.readyState = 2;
  }
  terminate(): void {
    this.terminated++;
  }
  /** The client answered the close: the socket emits 'close'. */
  handshakeEnds(): void {
    this.readyState = 3;
    this.emit('close');
  }
}

const warnings: unknown[][] = [];
const log = { warn: (...args: unknown[]) => warnings.push(args) } as unknown as Logger;

function hubOf(maxBufferedBytes = 1_000): StreamHub {
  warnings.length = 0;
  return new StreamHub({ maxBufferedBytes, log });
}

function connectionOf(hub: StreamHub, keyHash = 'hash-a'): { connection: StreamConnection; socket: FakeSocket } {
  const socket = new FakeSocket();
  const connection = new StreamConnection(socket as unknown as WebSocket, { prefix: `${keyHash}-prefix`, keyHash });
  hub.add(connection);
  return { connection, socket };
}

const prices = (assetId: string): StreamTopic => ({ channel: 'prices', assetId });
const trades = (assetId: string): StreamTopic => ({ channel: 'trades', assetId });
const candles = (assetId: string, interval: StreamTopic['interval']): StreamTopic => ({ channel: 'candles', assetId, interval });

function tradeEvent(asset: string, tradeId: string): TradeEvent {
  return { asset, venue: 'binance', market: 'BTCUSDT', quote: 'USDT', price: 100, quantity: 2, side: 'buy', ts: 1_700_000_000_000, tradeId } as TradeEvent;
}

afterEach(() => {
  vi.useRealTimers();
});

test('a new connection counts as alive: the first heartbeat pings it rather than cutting it', () => {
  const hub = hubOf();
  expect(connectionOf(hub).connection.alive).toBe(true);
});

describe('connection slots per key', () => {
  test('a key holds exactly `max` slots; a slot given back can be taken again; keys do not share', () => {
    const hub = hubOf();
    expect([hub.reserve('a', 2), hub.reserve('a', 2), hub.reserve('a', 2)]).toEqual([true, true, false]);
    expect(hub.reserve('b', 2)).toBe(true);
    hub.release('a');
    expect(hub.reserve('a', 2)).toBe(true);
    expect(hub.reserve('a', 2)).toBe(false);
    // Both given back: the key starts again from none.
    hub.release('a');
    hub.release('a');
    expect([hub.reserve('a', 2), hub.reserve('a', 2), hub.reserve('a', 2)]).toEqual([true, true, false]);
  });

  test('a key with no slot held gets none by releasing, however often, and a max of 0 refuses', () => {
    const hub = hubOf();
    hub.release('a');
    hub.release('a');
    expect([hub.reserve('a', 1), hub.reserve('a', 1)]).toEqual([true, false]);
    expect(hub.reserve('z', 0)).toBe(false);
  });

  test('removing a connection gives its slot back, once however often it is removed', () => {
    const hub = hubOf();
    expect(hub.reserve('hash-a', 2)).toBe(true);
    expect(hub.reserve('hash-a', 2)).toBe(true);
    const { connection } = connectionOf(hub, 'hash-a');
    expect(hub.connections.has(connection)).toBe(true);
    hub.remove(connection);
    hub.remove(connection);
    expect(hub.connections.has(connection)).toBe(false);
    // One slot back, not two.
    expect([hub.reserve('hash-a', 2), hub.reserve('hash-a', 2)]).toEqual([true, false]);
  });
});

describe('subscriptions', () => {
  test('up to `max` per connection, all or none; one already held costs nothing', () => {
    const hub = hubOf();
    const { connection } = connectionOf(hub);
    expect(hub.subscribe(connection, [prices('bitcoin'), prices('ethereum')], 3)).toBe(2);
    // Two held, two new: one past the limit, so neither is added.
    expect(() => hub.subscribe(connection, [prices('solana'), trades('bitcoin')], 3)).toThrow(
      new ApiError(400, 'bad_request', 'a connection holds at most 3 subscriptions (it has 2, this adds 2): unsubscribe some, or open another connection'),
    );
    expect([...connection.topics].sort()).toEqual(['prices|bitcoin', 'prices|ethereum']);
    // Exactly at the limit, with one already held among them.
    expect(hub.subscribe(connection, [prices('bitcoin'), trades('bitcoin')], 3)).toBe(3);
    expect(() => hub.assertRoom(connection, [trades('solana')], 3)).toThrow(ApiError);
    expect(hub.assertRoom(connection, [prices('ethereum'), trades('bitcoin')], 3)).toEqual([]);
  });

  test('unsubscribe removes what it holds, ignores the rest, and forgets what it was last sent', () => {
    const hub = hubOf();
    const { connection, socket } = connectionOf(hub);
    hub.subscribe(connection, [prices('bitcoin'), prices('ethereum')], 10);
    hub.publishPrices([{ assetId: 'bitcoin', price: 100, measured: true } as PriceEntry]);
    expect(hub.unsubscribe(connection, [prices('bitcoin'), prices('solana')])).toBe(1);
    expect(hub.unsubscribe(connection, [prices('bitcoin')])).toBe(1);
    // Subscribed again, the unchanged price is sent again: the client gets the current price first.
    hub.subscribe(connection, [prices('bitcoin')], 10);
    hub.publishPrices([{ assetId: 'bitcoin', price: 100, measured: true } as PriceEntry]);
    expect(socket.sent).toEqual([
      { channel: 'prices', data: [{ assetId: 'bitcoin', price: 100, measured: true }] },
      { channel: 'prices', data: [{ assetId: 'bitcoin', price: 100, measured: true }] },
    ]);
  });

  test('the pollers are asked for the assets someone holds on the channel and interval, and not for one nobody holds any more', () => {
    const hub = hubOf();
    const a = connectionOf(hub, 'hash-a');
    const b = connectionOf(hub, 'hash-b');
    hub.subscribe(a.connection, [prices('bitcoin'), candles('bitcoin', '1m'), candles('ethereum', '1h'), trades('solana')], 10);
    hub.subscribe(b.connection, [prices('bitcoin'), prices('ethereum')], 10);
    expect(hub.subscribedAssets('prices').sort()).toEqual(['bitcoin', 'ethereum']);
    expect(hub.subscribedAssets('candles', '1m')).toEqual(['bitcoin']);
    expect(hub.subscribedAssets('candles', '1h')).toEqual(['ethereum']);
    expect(hub.subscribedAssets('candles', '1d')).toEqual([]);
    expect(hub.subscribedAssets('candles')).toEqual([]);
    expect(hub.subscribedAssets('trades')).toEqual(['solana']);

    // Bitcoin's price is still held by b; ethereum's by nobody once b goes.
    hub.unsubscribe(a.connection, [prices('bitcoin')]);
    expect(hub.subscribedAssets('prices').sort()).toEqual(['bitcoin', 'ethereum']);
    hub.remove(b.connection);
    expect(hub.subscribedAssets('prices')).toEqual([]);
    expect(b.connection.topics.size).toBe(0);
    hub.unsubscribe(a.connection, [candles('bitcoin', '1m')]);
    expect(hub.subscribedAssets('candles', '1m')).toEqual([]);
    expect(hub.subscribedAssets('candles', '1h')).toEqual(['ethereum']);

    // A topic nobody held is made again for the next subscriber, who is sent to.
    hub.subscribe(b.connection, [prices('ethereum')], 10);
    hub.publishPrices([{ assetId: 'ethereum', price: 3, measured: false } as PriceEntry]);
    expect(b.socket.sent).toEqual([{ channel: 'prices', data: [{ assetId: 'ethereum', price: 3, measured: false }] }]);
  });
});

describe('fan-out', () => {
  test('trades go to their asset\'s subscribers, one message per connection per call, in order', () => {
    const hub = hubOf();
    const a = connectionOf(hub, 'hash-a');
    const b = connectionOf(hub, 'hash-b');
    hub.subscribe(a.connection, [trades('bitcoin'), trades('ethereum')], 10);
    hub.subscribe(b.connection, [trades('ethereum')], 10);
    hub.publishTrades([tradeEvent('bitcoin', '1'), tradeEvent('solana', '2'), tradeEvent('ethereum', '3'), tradeEvent('bitcoin', '4')]);
    const sent = (asset: string, tradeId: string) => ({ assetId: asset, venue: 'binance', market: 'BTCUSDT', quote: 'USDT', price: 100, quantity: 2, side: 'buy', time: 1_700_000_000_000, tradeId });
    expect(a.socket.sent).toEqual([{ channel: 'trades', data: [sent('bitcoin', '1'), sent('ethereum', '3'), sent('bitcoin', '4')] }]);
    expect(b.socket.sent).toEqual([{ channel: 'trades', data: [sent('ethereum', '3')] }]);
  });

  test('a price or candle is sent again only when it changed', () => {
    const hub = hubOf();
    const { connection, socket } = connectionOf(hub);
    hub.subscribe(connection, [prices('bitcoin'), prices('ethereum'), candles('bitcoin', '1m')], 10);
    const btc = { assetId: 'bitcoin', price: 100, measured: true } as PriceEntry;
    const eth = { assetId: 'ethereum', price: 3, measured: true } as PriceEntry;
    hub.publishPrices([btc, eth]);
    hub.publishPrices([btc, { ...eth, measured: false }]);
    hub.publishPrices([btc, { ...eth, measured: false }]);
    const candle = { assetId: 'bitcoin', time: 60_000, open: 1, high: 2, low: 1, close: 2, volume: 5 } as unknown as StreamCandle;
    hub.publishCandles('1m', [candle]);
    hub.publishCandles('1m', [candle]);
    hub.publishCandles('1m', [{ ...candle, close: 1 }]);
    // Another interval's candle is nobody's here.
    hub.publishCandles('1h', [candle]);
    expect(socket.sent).toEqual([
      { channel: 'prices', data: [btc, eth] },
      { channel: 'prices', data: [{ ...eth, measured: false }] },
      { channel: 'candles', interval: '1m', data: [candle] },
      { channel: 'candles', interval: '1m', data: [{ ...candle, close: 1 }] },
    ]);
  });

  test('nothing is sent to a socket that is closing', () => {
    const hub = hubOf();
    const { connection, socket } = connectionOf(hub);
    socket.readyState = 2;
    hub.send(connection, { op: 'pong', at: 1 });
    expect(socket.sent).toEqual([]);
    expect(socket.closes).toEqual([]);
  });
});

describe('a slow reader', () => {
  test('exactly `maxBufferedBytes` unsent is still sent to; one byte more closes it with 4008 and a warning', () => {
    const hub = hubOf(1_000);
    const { connection, socket } = connectionOf(hub);
    hub.subscribe(connection, [trades('bitcoin')], 10);
    socket.bufferedAmount = 1_000;
    hub.send(connection, { op: 'pong', at: 1 });
    expect(socket.sent).toEqual([{ op: 'pong', at: 1 }]);
    expect(warnings).toEqual([]);

    socket.bufferedAmount = 1_001;
    hub.send(connection, { op: 'pong', at: 2 });
    expect(socket.sent).toHaveLength(1);
    expect(socket.closes).toEqual([{ code: closeCodes.slowConsumer, reason: 'slow consumer: more than 1000 bytes unsent' }]);
    expect(warnings).toEqual([[{ keyPrefix: 'hash-a-prefix', bufferedBytes: 1_001, maxBufferedBytes: 1_000 }, 'stream client reads too slowly: closing its connection']]);
    // Dropped from the hub: no more trades, and its subscription is nobody's.
    expect(hub.connections.has(connection)).toBe(false);
    expect(hub.subscribedAssets('trades')).toEqual([]);
  });

  test('its socket is cut 10 s after the close if the close handshake has not ended', () => {
    vi.useFakeTimers();
    const hub = hubOf();
    const { connection, socket } = connectionOf(hub);
    hub.close(connection, closeCodes.slowConsumer, 'slow');
    vi.advanceTimersByTime(9_999);
    expect(socket.terminated).toBe(0);
    vi.advanceTimersByTime(1);
    expect(socket.terminated).toBe(1);
  });

  test('a close handshake that ends within the grace leaves the socket uncut', () => {
    vi.useFakeTimers();
    const hub = hubOf();
    const { connection, socket } = connectionOf(hub);
    hub.close(connection, closeCodes.keyRevoked, 'revoked');
    vi.advanceTimersByTime(5_000);
    socket.handshakeEnds();
    vi.advanceTimersByTime(60_000);
    expect(socket.terminated).toBe(0);
    expect(socket.closes).toEqual([{ code: 4001, reason: 'revoked' }]);
  });

  test('the cut does not keep the process alive (its timer is unref\'d)', () => {
    const hub = hubOf();
    const { connection, socket } = connectionOf(hub);
    const unref = vi.spyOn(globalThis, 'setTimeout');
    hub.close(connection, closeCodes.slowConsumer, 'slow');
    const timer = unref.mock.results[0]!.value as NodeJS.Timeout;
    unref.mockRestore();
    expect(timer.hasRef()).toBe(false);
    socket.handshakeEnds();
  });
});
