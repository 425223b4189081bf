// The hooks the ccxt collector sets on an exchange instance, on a real ccxt class offline: ccxt builds
// its clients for a URL without connecting, and the hooks are called as its sockets would call them.
import * as ccxt from 'ccxt';
import type { Exchange } from 'ccxt';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { describe, expect, test } from 'vitest';
import { bookSymbol, hookExchange, type ExchangeCounters } from '../ccxtExchange.ts';

interface ClientLike {
  url: string;
  connection?: { readyState: number };
  send(message: unknown): Promise<unknown>;
  reject(error: unknown, messageHash?: string): unknown;
  resolve(result: unknown, messageHash: string): unknown;
}

/** A fresh bitget exchange with the hooks set; what they report is recorded. */
function hooked(before?: (exchange: Exchange) => void) {
  const exchange = new (ccxt.pro as unknown as Record<string, new (config: object) => Exchange>).bitget!({});
  before?.(exchange);
  const dials: [string, string | undefined][] = [];
  const broken: Error[] = [];
  const settled: string[] = [];
  const lines: Record<string, unknown>[] = [];
  const log = pino({ level: 'debug' }, new Writable({ write: (chunk, _enc, done) => (lines.push(JSON.parse(String(chunk))), done()) }));
  const counters: ExchangeCounters = { messages: 0, unknownMessages: 0, lastMessageAt: undefined };
  const hooks = hookExchange(exchange, {
    ccxt,
    log,
    counters,
    onDial: (url, redial) => void dials.push([url, redial?.reason]),
    onBookBroken: (error) => void broken.push(error),
    onBookSettled: (symbol) => void settled.push(symbol),
  });
  const client = (url: string) => (exchange as unknown as { client(url: string): ClientLike }).client(url);
  const clients = () => (exchange as unknown as { clients: Record<string, ClientLike> }).clients;
  return { exchange, hooks, dials, broken, settled, lines, counters, client, clients };
}

describe('dials and redials', () => {
  test('the first socket to a URL is a dial; a new one after it closed is a redial with the reason it closed', () => {
    const { exchange, dials, client, clients } = hooked();
    const first = client('wss://a');
    client('wss://a');
    expect(dials).toEqual([['wss://a', undefined]]);
    // The venue closed a working socket: ccxt forgets the client.
    exchange.onClose(first, { code: 1006 });
    expect(clients()['wss://a']).toBeUndefined();
    client('wss://a');
    client('wss://b');
    expect(dials).toEqual([['wss://a', undefined], ['wss://a', 'closed by the venue (code 1006)'], ['wss://b', undefined]]);
  });

  test('an error is the reason of the next redial; a socket the collector closed says why it did', async () => {
    const { exchange, hooks, dials, client, clients } = hooked();
    const a = client('wss://a');
    const failed = Object.assign(a, { error: new Error('ECONNRESET') });
    exchange.onError(failed, failed.error);
    expect(clients()['wss://a']).toBeUndefined();
    const again = client('wss://a');
    await hooks.closeSockets('book of ETH/USDT out of sync');
    delete clients()['wss://a'];
    exchange.onClose(again, { code: 1000 });
    client('wss://a');
    expect(dials.map(([, reason]) => reason)).toEqual([undefined, 'ECONNRESET', 'book of ETH/USDT out of sync']);
    // Once said, the collector's reason is not given again for a later close.
    exchange.onClose(client('wss://a'), {});
    delete clients()['wss://a'];
    client('wss://a');
    expect(dials.at(-1)).toEqual(['wss://a', 'closed by the venue (code none)']);
  });

  test('connected: some socket was dialled and every one dialled is open', () => {
    const { hooks, client } = hooked();
    expect(hooks.connected()).toBe(false);
    const a = client('wss://a');
    expect(hooks.connected()).toBe(false);
    a.connection = { readyState: 1 };
    expect(hooks.connected()).toBe(true);
    client('wss://b').connection = { readyState: 0 };
    expect(hooks.connected()).toBe(false);
  });
});

describe("the clients' sends, rejections and resolutions", () => {
  test('a send that fails (its socket gone) rejects for its caller but never unobserved', async () => {
    const { client } = hooked();
    const unobserved: unknown[] = [];
    const listener = (reason: unknown) => void unobserved.push(reason);
    process.on('unhandledRejection', listener);
    try {
      const c = client('wss://a');
      void c.send({ op: 'subscribe' });
      await expect(c.send({ op: 'subscribe' })).rejects.toThrow();
      await new Promise((r) => setImmediate(r));
      await new Promise((r) => setImmediate(r));
      expect(unobserved).toEqual([]);
    } finally {
      process.off('unhandledRejection', listener);
    }
  });

  test("a book's checksum or sequence error is reported once per error object; other rejections are not", () => {
    const { broken, client } = hooked();
    const c = client('wss://a');
    const checksum = new ccxt.ChecksumError('bitget ETH/USDT checksum failed');
    const nonce = new ccxt.InvalidNonce('bitget BTC/USDT nonce gap');
    c.reject(checksum, 'orderbook:ETH/USDT');
    c.reject(checksum);
    c.reject(nonce);
    c.reject(new ccxt.NetworkError('gone'));
    c.reject(new Error('plain'));
    expect(broken).toEqual([checksum, nonce]);
  });

  test('a watcher settled with an order book names its market; other results do not', () => {
    const { settled, client } = hooked();
    const c = client('wss://a');
    c.resolve({ symbol: 'BTC/USDT', bids: [], asks: [] }, 'orderbook:BTC/USDT');
    c.resolve([{ symbol: 'ETH/USDT', price: 1 }], 'trade:ETH/USDT');
    c.resolve({ symbol: 'SOL/USDT', bids: [] }, 'x');
    expect(settled).toEqual(['BTC/USDT']);
    expect([bookSymbol(undefined), bookSymbol('x'), bookSymbol({ symbol: 1, bids: [], asks: [] })]).toEqual([undefined, undefined, undefined]);
  });
});

describe('messages', () => {
  test('every message is counted with its time; text that is not a keep-alive is unknown', () => {
    const seen: unknown[] = [];
    const { exchange, counters } = hooked((e) => (e.handleMessage = (_c: unknown, m: unknown) => void seen.push(m)));
    const before = Date.now();
    exchange.handleMessage({}, 'pong');
    exchange.handleMessage({}, ' PING ');
    exchange.handleMessage({}, { event: 'data' });
    expect(counters).toMatchObject({ messages: 3, unknownMessages: 0 });
    expect(counters.lastMessageAt).toBeGreaterThanOrEqual(before);
    exchange.handleMessage({}, '\u0000{"not json');
    expect(counters).toMatchObject({ messages: 4, unknownMessages: 1 });
    // ccxt still sees every message.
    expect(seen).toHaveLength(4);
  });

  test("a parser that trips is an unknown message (counted once) and logged; ccxt's own errors go on to the watchers", () => {
    let thrown: Error = new TypeError("Cannot read properties of undefined (reading 'data')");
    const { exchange, counters, lines } = hooked((e) => {
      e.handleMessage = () => {
        throw thrown;
      };
    });
    exchange.handleMessage({}, { event: 'data' });
    exchange.handleMessage({}, 'not json');
    expect(counters).toMatchObject({ messages: 2, unknownMessages: 2 });
    expect(lines.filter((l) => l.msg === 'message ccxt could not handle')).toHaveLength(2);
    thrown = new ccxt.ExchangeError('bitget error 30001');
    expect(() => exchange.handleMessage({}, { event: 'error' })).toThrow(thrown);
    expect(counters.unknownMessages).toBe(2);
  });

  test("ccxt's own log lines go to the collector's logger at debug level", () => {
    const { exchange, lines } = hooked();
    exchange.log('connecting', 42);
    expect(lines.at(-1)).toMatchObject({ level: 20, ccxt: 'connecting 42', msg: 'ccxt' });
  });
});
